"""Shard tagging: every shard sees every partition's progress; bad rows are kept."""

from __future__ import annotations

import pandas as pd

from silver.join.engine import JoinParams
from silver.join.operator import join_shard_rows
from silver.join.sharding import tag_shards


def test_every_shard_gets_progress_rows_and_bad_rows_survive():
    rows = pd.DataFrame({"side": [0, 0, 1, 1], "partition": [0, 0, 1, 1], "offset": [0, 1, 0, 1],
                         "id": ["a", "b", None, None], "created_ms": [5, 7, 9, None],
                         "error": [None, None, None, "record without id"]})
    tagged = tag_shards(rows, 3)
    progress = tagged[tagged["id"].isna() & tagged["error"].isna()]
    assert sorted(progress["shard"].tolist()) == [0, 0, 1, 1, 2, 2]
    assert set(zip(progress["side"], progress["partition"], progress["created_ms"], strict=True)) == {
        (0, 0, 7), (1, 1, 9)}
    assert tagged["error"].notna().sum() == 1
    assert len(tagged[tagged["id"].notna()]) == 2


def test_bad_rows_come_out_as_quarantine_with_their_reason():
    rows = pd.DataFrame({"side": [1], "partition": [2], "offset": [9], "id": [None],
                         "created_ms": [None], "error": ["not a join record: no valid created_ms"]})
    out, _ = join_shard_rows(0, tag_shards(rows, 1), None, JoinParams(partitions=(1, 3)))
    bad = out[out["record"] == "quarantine"].iloc[0]
    assert (bad["right_partition"], bad["right_offset"]) == (2, 9)
    assert bad["reason"].startswith("not a join record")
