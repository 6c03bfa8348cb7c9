"""Silver's suites on hand-made frames in Spark: a good frame passes, each broken rule is named."""

from __future__ import annotations

import pandas as pd
import pytest

from core.config import QualityConfig
from core.quality import validate_frame
from silver.expectations import (
    accounting_frame,
    accounting_suite,
    quarantine_suite,
    routed_suite,
    worker_latency_suite,
    worker_windows_suite,
)

pytestmark = pytest.mark.spark

W = 3


def _routed() -> pd.DataFrame:
    return pd.DataFrame({
        "run_id": "r", "splitter": 0, "partition": [0, 0, 0, 1], "offset": [0, 1, 1, 0],
        "tuple_index": [0, 0, 1, 0], "key": ["a", "b", "a", "c"], "count": [1, 2, 1, 5],
        "event_time_ms": [0, 10, 10, 20], "worker": [0, 2, 1, 0],
    })  # fmt: skip


@pytest.mark.parametrize("workers", [1, 3, 8])
def test_routed_good_frame_passes(workers, failed):
    frame = _routed().assign(worker=_routed()["worker"] % workers)
    assert failed(routed_suite(QualityConfig(), workers), frame) == set()


@pytest.mark.parametrize(("column", "value", "expectation"), [
    ("worker", W, "expect_column_values_to_be_between"),
    ("worker", -1, "expect_column_values_to_be_between"),
    ("count", 0, "expect_column_values_to_be_between"),
    ("count", -4, "expect_column_values_to_be_between"),
    ("key", None, "expect_column_values_to_not_be_null"),
    ("event_time_ms", None, "expect_column_values_to_not_be_null"),
])  # fmt: skip
def test_routed_broken_value_is_named(column, value, expectation, failed):
    frame = _routed()
    frame[column] = frame[column].astype(object)
    frame.loc[1, column] = value
    assert (expectation, column) in failed(routed_suite(QualityConfig(), W), frame)


def test_routed_tuple_twice_fails_uniqueness(failed):
    frame = pd.concat([_routed(), _routed().iloc[[0]]], ignore_index=True)
    assert failed(routed_suite(QualityConfig(), W), frame) == {
        ("expect_compound_columns_to_be_unique", "partition, offset, tuple_index")}


def test_observed_values_are_reported(validate):
    outcome = validate(routed_suite(QualityConfig(), W), _routed().assign(worker=[0, 3, 1, 0]))
    (failure,) = outcome.failures
    assert failure.column == "worker" and "1 of 4 rows unexpected" in failure.observed
    assert "[3]" in failure.observed


def test_quarantine_needs_a_reason(failed):
    frame = pd.DataFrame({"partition": [0, 1], "offset": [5, 5], "error": ["not JSON", None]})
    assert failed(quarantine_suite(QualityConfig()), frame) == {
        ("expect_column_values_to_not_be_null", "error")}
    assert failed(quarantine_suite(QualityConfig()), frame.fillna("empty key")) == set()


def test_worker_windows_rules(failed):
    good = pd.DataFrame({"batch_id": [0, 0, 0, 1], "window_start_ms": [0, 0, 15_000, 15_000],
                         "worker": [0, 1, 2, 2], "key": ["a", "a", "b", "b"],
                         "count": [3, 1, 2, 1], "tuples": [2, 1, 1, 1]})  # fmt: skip
    suite = worker_windows_suite(QualityConfig(), W)
    assert failed(suite, good) == set()
    assert failed(suite, good.assign(worker=[0, 1, 3, 2])) == {
        ("expect_column_values_to_be_between", "worker")}
    assert failed(suite, good.assign(tuples=[2, 0, 1, 1])) == {
        ("expect_column_values_to_be_between", "tuples")}
    assert failed(suite, good.assign(batch_id=0)) == {  # a batch written twice
        ("expect_compound_columns_to_be_unique", "batch_id, window_start_ms, worker, key")}


def test_worker_latency_rules(failed):
    good = pd.DataFrame({"batch_id": [0, 0, 1], "window_start_ms": [0, 0, 0], "worker": [0, 0, 0],
                         "latency_ms": [1.0, 2.5, 1.0], "tuples": [3, 1, 2]})  # fmt: skip
    suite = worker_latency_suite(QualityConfig(), W)
    assert failed(suite, good) == set()
    assert failed(suite, good.assign(latency_ms=[1.0, -2.0, 1.0])) == {
        ("expect_column_values_to_be_between", "latency_ms")}
    assert failed(suite, good.assign(batch_id=0)) == {
        ("expect_compound_columns_to_be_unique", "batch_id, window_start_ms, worker, latency_ms")}


def _bronze() -> pd.DataFrame:
    return pd.DataFrame({"partition": [0, 0, 1, 1], "offset": [0, 1, 0, 1]})


def _accounting(spark, to_spark, bronze, routed, quarantine):
    frames = [None if frame is None else to_spark(frame) for frame in (bronze, routed, quarantine)]
    return accounting_frame(spark, *frames)


def test_accounting_passes_when_every_message_is_routed_or_quarantined(spark, to_spark, validate):
    quarantine = pd.DataFrame({"partition": [1], "offset": [1], "error": ["not JSON"]})
    frame = _accounting(spark, to_spark, _bronze(), _routed(), quarantine)
    assert [row.asDict() for row in frame.collect()] == [{
        "bronze_messages": 4, "routed_or_quarantined": 4, "unaccounted_messages": 0,
        "unknown_messages": 0}]  # fmt: skip
    assert validate_frame(accounting_suite(), frame).success


def test_accounting_names_a_lost_message(spark, to_spark):
    # (1, 1) is neither routed nor quarantined
    frame = _accounting(spark, to_spark, _bronze(), _routed(), None)
    assert {(f.expectation, f.column) for f in validate_frame(accounting_suite(), frame).failures} == {
        ("expect_column_pair_values_to_be_equal", "bronze_messages = routed_or_quarantined"),
        ("expect_column_values_to_be_between", "unaccounted_messages"),
    }  # fmt: skip


def test_accounting_names_a_message_bronze_never_had(spark, to_spark):
    routed = pd.concat([_routed(), _routed().iloc[[0]].assign(partition=7)], ignore_index=True)
    quarantine = pd.DataFrame({"partition": [1], "offset": [1], "error": ["x"]})
    frame = _accounting(spark, to_spark, _bronze(), routed, quarantine)
    assert frame.collect()[0]["unknown_messages"] == 1
    failures = validate_frame(accounting_suite(), frame).failures
    assert ("expect_column_values_to_be_between", "unknown_messages") in {
        (f.expectation, f.column) for f in failures}


def test_accounting_of_a_run_without_silver_tables(spark, to_spark):
    frame = _accounting(spark, to_spark, _bronze(), None, None)
    assert frame.collect()[0].asDict() == {"bronze_messages": 4, "routed_or_quarantined": 0,
                                           "unaccounted_messages": 4, "unknown_messages": 0}  # fmt: skip
