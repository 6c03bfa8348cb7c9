"""Shard tagging: records by id hash, heartbeats to every shard, bad rows kept."""

from __future__ import annotations

import pandas as pd
import pyarrow as pa

from silver.join.engine import JoinParams
from silver.join.local import as_pandas
from silver.join.operator import join_shard_rows
from silver.join.sharding import shard_of_ids, tag_shards
from silver.join.source import join_blocks


def test_records_go_to_their_id_shard_and_heartbeats_to_every_shard():
    rows = pd.DataFrame(
        {
            "side": [0, 0, 1, 1],
            "partition": [0, 0, 1, 1],
            "offset": [0, 1, 0, 1],
            "id": ["a", "b", None, None],
            "created_ms": [5, 7, 9, None],
            "error": [None, None, None, "record without id"],
        }
    )
    tagged = as_pandas(tag_shards(pa.Table.from_pandas(rows), 3))
    records = tagged[tagged["id"].notna()]
    assert dict(zip(records["id"], records["shard"], strict=True)) == dict(
        zip(["a", "b"], shard_of_ids(pa.array(["a", "b"]), 3), strict=True)
    )
    heartbeats = tagged[tagged["id"].isna() & tagged["error"].isna()]
    assert sorted(heartbeats["shard"]) == [0, 1, 2]
    assert set(heartbeats["created_ms"]) == {9}
    bad = tagged[tagged["error"].notna()]
    assert bad["shard"].tolist() == [1 % 3]


def test_shards_are_spread_and_never_negative():
    ids = pa.array([f"id-{i}" for i in range(10_000)])
    counts = pd.Series(shard_of_ids(ids, 4)).value_counts()
    assert sorted(counts.index) == [0, 1, 2, 3]
    assert counts.min() > 2_300


def test_bad_rows_come_out_as_quarantine_with_their_reason():
    rows = pd.DataFrame(
        {
            "side": [1],
            "partition": [2],
            "offset": [9],
            "id": [None],
            "created_ms": [None],
            "error": ["not a join record: no valid created_ms"],
        }
    )
    out, _ = join_shard_rows(0, tag_shards(pa.Table.from_pandas(rows), 1), None,
                             JoinParams(partitions=(1, 3)))
    out = as_pandas(out)
    bad = out[out["record"] == "quarantine"].iloc[0]
    assert (bad["right_partition"], bad["right_offset"]) == (2, 9)
    assert bad["reason"].startswith("not a join record")


def test_each_shard_gets_one_block_of_records_heartbeats_and_bad_values():
    values = [b'{"id": "a", "created_ms": 1}', b'{"id": "b", "created_ms": 2}',
              b'{"heartbeat": true, "created_ms": 3}', b"not json"]  # fmt: skip
    kafka = pa.RecordBatch.from_pydict({"value": pa.array(values, pa.binary()),
                                        "partition": pa.array([0] * 4, pa.int32()),
                                        "offset": pa.array(range(4), pa.int64())})  # fmt: skip
    blocks = join_blocks(kafka, 0, 2, [10, 11]).to_pydict()
    assert sorted(blocks["shard"]) == [0, 1]  # one block each, whatever each holds
    assert sum(blocks["rows"]) == 2 + 2 + 1  # the records, the heartbeat per shard, the bad value
