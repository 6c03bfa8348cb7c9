"""The peers' oracle: the generator's own window counts, and a check no wrong answer passes."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from bench.peers.oracle import check, expected_counts
from bronze.datasets.base import DatasetSpec
from bronze.datasets.registry import make_dataset

# 10 messages/s for 200 s from mid-minute: four windows, the first and last partial.
SPEC = DatasetSpec(
    name="ZIPF", messages=2_000, rate=10, keys=50, start_ms=DatasetSpec().start_ms + 30_000
)


def _from_payloads() -> pd.DataFrame:
    """Counts taken from the messages as a consumer reads them (JSON), not from the tuples."""
    rows = [
        json.loads(payload) for batch in make_dataset(SPEC).messages() for payload in batch.payloads
    ]
    frame = pd.DataFrame({"window_start_ms": [r["timestamp"] // 60_000 * 60_000 for r in rows],
                          "key": [r["key"] for r in rows]})  # fmt: skip
    return frame.groupby(["window_start_ms", "key"]).size().rename("count").reset_index()


def test_expected_counts_equal_the_messages_own_counts():
    expected = expected_counts(SPEC)
    assert expected["window_start_ms"].nunique() == 4
    assert int(expected["count"].sum()) == SPEC.messages
    assert check(_from_payloads(), expected) == {"correct": True, "rows": len(expected),
        "expected_rows": len(expected), "wrong_rows": 0, "messages": SPEC.messages}  # fmt: skip


def _miscount(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.assign(count=frame["count"] + (frame.index == 0))


@pytest.mark.parametrize("wrong", [
    lambda f: f.iloc[1:],                                  # a window and key missing
    _miscount,                                             # one count off by one
    lambda f: pd.concat([f, f.iloc[:1]]),                  # a row twice
    lambda f: pd.concat([f, f.iloc[:1].assign(key="x")]),  # a key never sent
    lambda f: f.assign(window_start_ms=f["window_start_ms"] + 1),  # windows not epoch-aligned
], ids=["missing", "miscounted", "duplicated", "invented", "shifted"])  # fmt: skip
def test_a_wrong_result_is_not_correct(wrong):
    expected = expected_counts(SPEC)
    assert not check(wrong(expected.copy()), expected)["correct"]
