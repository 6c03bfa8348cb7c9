"""Spreading join ids over shards while every shard still sees every partition's progress.

The join state is split by id (``shard = murmur3(id) mod shards``) so shards run
in parallel, but expiry needs the progress of *all* source partitions. So each
Spark task, which reads one Kafka partition range, also emits one *progress
row* per shard: the largest creation time it read from each ``(side,
partition)``. Heartbeats only ever become progress rows. Rows that failed to
parse go to a shard as they are, to come out as quarantine rows.
"""

from __future__ import annotations

from collections.abc import Iterator

import mmh3
import numpy as np
import pandas as pd

__all__ = ["TAGGED_COLUMNS", "stack", "tag_batches", "tag_shards"]

TAGGED_COLUMNS = ["shard", "side", "partition", "offset", "id", "created_ms", "error"]


def stack(frames: list[pd.DataFrame], columns: list[str]) -> pd.DataFrame:
    """Rows of ``frames`` one after another, missing columns as None.

    Column by column with numpy: ``pd.concat`` scans object columns for
    all-None blocks, which costs more than the join itself on large batches.
    """

    def column(frame: pd.DataFrame, name: str) -> np.ndarray:
        if name in frame:
            return frame[name].to_numpy()
        return np.full(len(frame), None, dtype=object)

    return pd.DataFrame(
        {name: np.concatenate([column(f, name) for f in frames]) for name in columns}
    )


def tag_shards(rows: pd.DataFrame, shards: int) -> pd.DataFrame:
    """Parsed rows -> records and bad rows with their shard, plus progress rows for every shard.

    Args:
        rows: columns ``side, partition, offset, id, created_ms, error``.
        shards: how many shards the join runs.
    """
    good = rows["error"].isna()
    timed = rows[good & rows["created_ms"].notna()]
    records = rows[good & rows["id"].notna()]
    bad = rows[~good]
    shard_of = np.array(
        [mmh3.hash(i, 0, signed=False) % shards for i in records["id"]], dtype=np.int32
    )
    tagged = [records.assign(shard=shard_of)]
    if not bad.empty:
        tagged.append(bad.assign(shard=(bad["partition"] % shards).astype(np.int32)))
    if not timed.empty:
        latest = timed.groupby(["side", "partition"], as_index=False)["created_ms"].max()
        progress = latest.merge(
            pd.DataFrame({"shard": np.arange(shards, dtype=np.int32)}), how="cross"
        )
        empty = np.full(len(progress), None, dtype=object)
        tagged.append(progress.assign(offset=-1, id=empty, error=empty))
    return stack(tagged, TAGGED_COLUMNS).astype({"shard": "int32", "side": "int32", "partition": "int32", "offset": "int64",
                       "created_ms": "Int64"})[TAGGED_COLUMNS]  # fmt: skip


def tag_batches(chunks: Iterator[pd.DataFrame], shards: int) -> Iterator[pd.DataFrame]:
    """``mapInPandas`` adapter: all chunks of a task at once, so progress rows are few."""
    frames = [chunk for chunk in chunks if not chunk.empty]
    if frames:
        yield tag_shards(pd.concat(frames, ignore_index=True), shards)
