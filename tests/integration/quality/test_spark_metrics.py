"""Suites judged on Spark-computed metrics give GX's own pandas results, rule by rule.

The oracle is GX itself: the same suite validated by GX's pandas engine on the
same rows. Frames are drawn at random (nulls, NaN, repeats, values outside every
range) so that each rule both passes and fails across the draws.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from great_expectations import expectations as gxe

from core.quality import empty_frame, new_suite, validate_frame
from core.quality_metrics import UnsupportedExpectation

pytestmark = pytest.mark.spark

_EXAMPLES = 3


def _suite():
    return new_suite("oracle.frame", [
        gxe.ExpectTableRowCountToBeBetween(min_value=5, max_value=40),
        gxe.ExpectColumnValuesToNotBeNull(column="a"),
        gxe.ExpectColumnValuesToNotBeNull(column="x", mostly=0.8),
        gxe.ExpectColumnValuesToBeBetween(column="a", min_value=0, max_value=6),
        gxe.ExpectColumnValuesToBeBetween(column="x", min_value=0.5, strict_min=True, mostly=0.7),
        gxe.ExpectColumnValuesToBeBetween(column="b", max_value=3, strict_max=True),
        gxe.ExpectColumnValuesToBeInSet(column="s", value_set=["p", "q"]),
        gxe.ExpectCompoundColumnsToBeUnique(column_list=["a", "b"]),
        gxe.ExpectCompoundColumnsToBeUnique(column_list=["a", "s"], mostly=0.6),
        gxe.ExpectColumnPairValuesToBeEqual(column_A="a", column_B="b"),
    ])  # fmt: skip


def _frame(seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = int(rng.integers(0, 30))

    def holes(values: np.ndarray, rate: float) -> pd.Series:
        # Missing integers are NaN in float columns, as Arrow hands them to pandas.
        return pd.Series(values).mask(rng.random(rows) < rate)

    floats = rng.normal(1.0, 1.0, rows)
    floats[rng.random(rows) < 0.1] = np.nan  # NaN: missing to pandas, so to the Spark gates too
    return pd.DataFrame({
        "a": holes(rng.integers(-1, 8, rows), 0.1 * (seed % 2)),
        "b": holes(rng.integers(0, 5, rows), 0.2),
        "x": floats,
        "s": holes(rng.choice(np.array(["p", "q", "r"], dtype=object), rows), 0.1),
    })  # fmt: skip


@pytest.fixture(scope="module")
def pandas_batch():
    import great_expectations as gx

    context = gx.get_context(mode="ephemeral")
    asset = context.data_sources.add_pandas("oracle").add_dataframe_asset("frame")
    return asset.add_batch_definition_whole_dataframe("whole")


def _same(value, other) -> bool:
    if isinstance(value, float) and isinstance(other, float):
        return math.isclose(value, other, rel_tol=1e-9) or (math.isnan(value) and math.isnan(other))
    return value == other


def _rule(result) -> str:
    config = result.expectation_config
    kwargs = {k: v for k, v in config.kwargs.items() if k != "batch_id"}
    return f"{config.type} {sorted(kwargs.items())}"


@pytest.mark.parametrize("seed", range(12))
def test_spark_metrics_judge_like_gx_pandas(seed, pandas_batch, to_spark):
    frame = _frame(seed)
    suite = _suite()
    result_format = {"result_format": "SUMMARY", "partial_unexpected_count": _EXAMPLES}
    oracle = pandas_batch.get_batch(batch_parameters={"dataframe": frame}).validate(
        suite, result_format=result_format)
    outcome = validate_frame(suite, to_spark(frame), "r", _EXAMPLES)

    assert outcome.success == oracle.success
    # GX orders its results its own way: pair them by their expectation.
    wanted = {_rule(r): r for r in oracle.results}
    assert len(wanted) == len(outcome.result.results)
    for got in outcome.result.results:
        want, name = wanted[_rule(got)], got.expectation_config.type
        assert got.success == want.success, (name, got.result, want.result)
        for field in ("observed_value", "element_count", "missing_count", "unexpected_count"):
            assert _same(got.result.get(field), want.result.get(field)), (name, field)
        if want.result.get("unexpected_count"):
            shown = got.result["partial_unexpected_list"]
            assert len(shown) == min(_EXAMPLES, want.result["unexpected_count"]), name


def test_a_missing_column_fails_its_rules_with_the_reason(to_spark):
    outcome = validate_frame(_suite(), to_spark(_frame(2).drop(columns=["s"])), "r")
    failed = {(f.expectation, f.column): f.observed for f in outcome.failures}
    assert failed[("expect_column_values_to_be_in_set", "s")] == (
        'error: The column "s" in BatchData does not exist.')
    assert ("expect_column_values_to_not_be_null", "a") not in failed


def test_a_rule_without_spark_metrics_is_refused(to_spark):
    suite = new_suite("oracle.median", [gxe.ExpectColumnMedianToBeBetween(column="a", min_value=0)])
    with pytest.raises(UnsupportedExpectation, match=r"column\.median"):
        validate_frame(suite, to_spark(_frame(1)), "r")


def test_an_empty_frame_has_its_schema_and_no_partition_to_run(spark):
    frame = empty_frame(spark, "partition bigint, offset bigint, landed boolean")
    assert [(f.name, f.dataType.simpleString()) for f in frame.schema.fields] == [
        ("partition", "bigint"), ("offset", "bigint"), ("landed", "boolean")]
    assert frame.count() == 0
    # No partition, no task: createDataFrame([]) runs two through a Python RDD, whose
    # workers come from a daemon of their own.
    assert frame._jdf.queryExecution().toRdd().getNumPartitions() == 0
