"""The bronze suite on hand-made frames in Spark: a good frame passes, each broken rule is named."""

from __future__ import annotations

import pandas as pd
import pytest

from bronze.expectations import raw_events_suite
from core.config import QualityConfig

pytestmark = pytest.mark.spark


def _good() -> pd.DataFrame:
    return pd.DataFrame({"topic": ["t"] * 4, "partition": [0, 0, 1, 1], "offset": [0, 1, 0, 1],
                         "timestamp": pd.Timestamp("2024-01-01", tz="UTC")})  # fmt: skip


@pytest.fixture
def bronze_failed(failed):
    return lambda frame: failed(raw_events_suite(QualityConfig()), frame)


def test_good_frame_passes(validate):
    outcome = validate(raw_events_suite(QualityConfig()), _good())
    assert outcome.success and outcome.evaluated == 7 and outcome.failures == []


@pytest.mark.parametrize("column", ["topic", "partition", "offset"])
def test_null_coordinate_fails(column, bronze_failed):
    frame = _good()
    frame[column] = frame[column].astype(object)
    frame.loc[2, column] = None
    assert ("expect_column_values_to_not_be_null", column) in bronze_failed(frame)


def test_duplicate_offset_in_a_partition_fails(bronze_failed):
    frame = pd.concat([_good(), _good().iloc[[3]]], ignore_index=True)
    assert bronze_failed(frame) == {("expect_compound_columns_to_be_unique", "topic, partition, offset")}


def test_same_offset_in_another_partition_or_topic_is_fine(bronze_failed):
    frame = pd.concat([_good(), _good().assign(topic="other")], ignore_index=True)
    assert bronze_failed(frame) == set()


def test_negative_offset_and_empty_run_fail(bronze_failed):
    assert bronze_failed(_good().assign(offset=[0, -1, 0, 1])) == {
        ("expect_column_values_to_be_between", "offset")}
    assert ("expect_table_row_count_to_be_between", "table") in bronze_failed(_good().iloc[:0])


def test_mostly_from_config_tolerates_a_share_of_bad_rows(validate):
    frame = _good().assign(offset=[0, -1, 0, 1])
    outcome = validate(raw_events_suite(QualityConfig(mostly=0.5)), frame)
    assert outcome.success
