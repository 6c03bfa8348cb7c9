"""Gold's suites on hand-made frames in Spark: a good frame passes, each broken rule is named."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from core.config import QualityConfig
from core.quality import validate_frame
from gold.expectations import (
    distribution_metrics_suite,
    key_counts_suite,
    totals_frame,
    totals_suite,
    worker_load_suite,
)
from gold.schemas import CUMULATIVE_WINDOW_START_MS

pytestmark = pytest.mark.spark

W = 4


def _metrics() -> pd.DataFrame:
    return pd.DataFrame({
        "scope": ["cumulative", "window", "window"],
        "window_start_ms": [CUMULATIVE_WINDOW_START_MS, 0, 60_000],
        "skew_s": [0.0, 0.5, 1.0], "dist_cost": [1.0, 1.5, float(W)],
        "stddev_pct": [0.0, 3.2, 40.0], "imbalance": [0.0, 0.1, 0.75],
        "capacity": [1000.0, 2500.0, 0.0], "capacity_vs_key": [1.0, 1 / W, float(W)],
    })  # fmt: skip


def test_metrics_in_range_pass(failed):
    assert failed(distribution_metrics_suite(QualityConfig(), W), _metrics()) == set()


@pytest.mark.parametrize(("column", "value"), [
    ("skew_s", 1.01), ("skew_s", -0.2), ("dist_cost", 0.99), ("dist_cost", W + 0.5),
    ("stddev_pct", -1.0), ("imbalance", -0.01), ("capacity", -1.0),
    ("capacity_vs_key", 1 / W - 0.01), ("capacity_vs_key", W + 0.01),
])  # fmt: skip
def test_metric_out_of_range_is_named(column, value, failed):
    frame = _metrics()
    frame.loc[1, column] = value
    assert failed(distribution_metrics_suite(QualityConfig(), W), frame) == {
        ("expect_column_values_to_be_between", column)}


def test_nan_metric_and_unknown_scope_fail(failed):
    frame = _metrics()
    frame.loc[2, "skew_s"] = math.nan
    frame.loc[0, "scope"] = "total"
    assert failed(distribution_metrics_suite(QualityConfig(), W), frame) == {
        ("expect_column_values_to_not_be_null", "skew_s"),
        ("expect_column_values_to_be_in_set", "scope"),
    }  # fmt: skip


def test_a_cumulative_row_without_a_window_start_fails(failed):
    # The table is partitioned by window_start_ms: its whole-run row names a real one.
    frame = _metrics().astype({"window_start_ms": "Int64"})
    frame.loc[0, "window_start_ms"] = None
    assert failed(distribution_metrics_suite(QualityConfig(), W), frame) == {
        ("expect_column_values_to_not_be_null", "window_start_ms")}


def test_metric_bounds_come_from_config(failed):
    config = QualityConfig(skew_s=(0.0, 0.9))
    assert ("expect_column_values_to_be_between", "skew_s") in failed(
        distribution_metrics_suite(config, W), _metrics())


def test_key_counts_rules(failed):
    good = pd.DataFrame({"window_start_ms": [0, 0, 60_000], "key": ["a", "b", "a"],
                         "count": [5, 1, 2], "tuples": [3, 1, 2], "workers": [2, 1, W]})  # fmt: skip
    suite = key_counts_suite(QualityConfig(), W)
    assert failed(suite, good) == set()
    assert failed(suite, good.assign(count=[5, 0, 2])) == {
        ("expect_column_values_to_be_between", "count")}
    assert failed(suite, good.assign(workers=[2, 1, W + 1])) == {
        ("expect_column_values_to_be_between", "workers")}
    assert failed(suite, good.assign(key=["a", "a", "a"])) == {
        ("expect_compound_columns_to_be_unique", "window_start_ms, key")}


def test_worker_load_rules(failed):
    good = pd.DataFrame({"worker": range(W), "tuples": [0, 3, 1, 2]})
    assert failed(worker_load_suite(QualityConfig(), W), good) == set()
    assert failed(worker_load_suite(QualityConfig(), W), good.assign(worker=[0, 1, 2, W])) == {
        ("expect_column_values_to_be_between", "worker")}


def test_totals_equal_pass_and_a_lost_count_is_named(spark, to_spark):
    routed = to_spark(pd.DataFrame({"count": [1, 2, 3]}))
    counts = pd.DataFrame({"count": [3, 3], "tuples": [2, 1]})
    frame = totals_frame(spark, routed, to_spark(counts))
    assert frame.collect()[0].asDict() == {"silver_count": 6, "gold_count": 6, "silver_tuples": 3,
                                           "gold_tuples": 3}  # fmt: skip
    assert validate_frame(totals_suite(), frame, "r").success
    outcome = validate_frame(totals_suite(), totals_frame(spark, routed, to_spark(counts.iloc[:1])))
    assert {(f.expectation, f.column) for f in outcome.failures} == {
        ("expect_column_pair_values_to_be_equal", "silver_count = gold_count"),
        ("expect_column_pair_values_to_be_equal", "silver_tuples = gold_tuples"),
    }  # fmt: skip
    assert "(6, 3)" in outcome.failures[0].observed


def test_totals_of_missing_tables_are_zero(spark):
    frame = totals_frame(spark, None, None)
    assert frame.collect()[0].asDict() == {"silver_count": 0, "gold_count": 0, "silver_tuples": 0,
                                           "gold_tuples": 0}  # fmt: skip
