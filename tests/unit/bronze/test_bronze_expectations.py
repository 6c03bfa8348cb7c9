"""The bronze suite on hand-made frames: a good frame passes, each broken rule is named."""

from __future__ import annotations

import pandas as pd
import pytest

from bronze.expectations import raw_events_suite
from core.config import QualityConfig
from core.quality import validate_frame


def _good() -> pd.DataFrame:
    return pd.DataFrame({"topic": ["t"] * 4, "partition": [0, 0, 1, 1], "offset": [0, 1, 0, 1],
                         "timestamp": pd.Timestamp("2024-01-01", tz="UTC")})  # fmt: skip


def _failed(frame: pd.DataFrame) -> set[tuple[str, str]]:
    outcome = validate_frame(raw_events_suite(QualityConfig()), frame, "r")
    return {(f.expectation, f.column) for f in outcome.failures}


def test_good_frame_passes():
    outcome = validate_frame(raw_events_suite(QualityConfig()), _good(), "r")
    assert outcome.success and outcome.evaluated == 7 and outcome.failures == []


@pytest.mark.parametrize("column", ["topic", "partition", "offset"])
def test_null_coordinate_fails(column):
    frame = _good()
    frame[column] = frame[column].astype(object)
    frame.loc[2, column] = None
    assert ("expect_column_values_to_not_be_null", column) in _failed(frame)


def test_duplicate_offset_in_a_partition_fails():
    frame = pd.concat([_good(), _good().iloc[[3]]], ignore_index=True)
    assert _failed(frame) == {("expect_compound_columns_to_be_unique", "topic, partition, offset")}


def test_same_offset_in_another_partition_or_topic_is_fine():
    frame = pd.concat([_good(), _good().assign(topic="other")], ignore_index=True)
    assert _failed(frame) == set()


def test_negative_offset_and_empty_run_fail():
    assert _failed(_good().assign(offset=[0, -1, 0, 1])) == {
        ("expect_column_values_to_be_between", "offset")}
    assert ("expect_table_row_count_to_be_between", "table") in _failed(_good().iloc[:0])


def test_mostly_from_config_tolerates_a_share_of_bad_rows():
    frame = _good().assign(offset=[0, -1, 0, 1])
    outcome = validate_frame(raw_events_suite(QualityConfig(mostly=0.5)), frame, "r")
    assert outcome.success
