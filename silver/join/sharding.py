"""Spreading join ids over shards: the rule the Spark job and the local join share.

The join state is split by id so shards run in parallel: a record goes to shard
``xxhash64(id) mod shards`` (Spark's ``pmod(xxhash64(id), shards)``, computed in
the Kafka reader tasks of the streaming job and by the local join alike). Each shard
tracks the progress of every source partition from the records it receives: a
lower bound of how far that partition has really been consumed, so expiry can
only come later than with the partition's true progress, never earlier.
Heartbeats (no id) go to every shard, so the end of a partition reaches them
all. Rows that failed to parse go to shard ``partition mod shards``, to come
out as quarantine rows.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import xxhash

__all__ = ["SHARD_HASH_SEED", "TAGGED_ARROW", "TAGGED_COLUMNS", "shard_of_ids", "stack",
           "tag_shards"]  # fmt: skip

TAGGED_ARROW = pa.schema([("shard", pa.int32()), ("side", pa.int32()), ("partition", pa.int32()),
                          ("offset", pa.int64()), ("id", pa.string()), ("created_ms", pa.int64()),
                          ("error", pa.string())])  # fmt: skip
"""Rows tagged with their shard (:func:`tag_shards`), as they travel to the join in blocks."""
TAGGED_COLUMNS = TAGGED_ARROW.names

SHARD_HASH_SEED = 42
"""The seed of Spark's ``xxhash64``: ids keep the shards the job gave them when Spark hashed them."""


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


def shard_of_ids(ids: pd.Series, shards: int) -> np.ndarray:
    """Each id's shard, as Spark's ``pmod(xxhash64(id), shards)`` computes it."""
    digests = np.fromiter((xxhash.xxh64_intdigest(i.encode(), SHARD_HASH_SEED) for i in ids),
                          dtype=np.uint64, count=len(ids))  # fmt: skip
    # Spark's xxhash64 is a signed long and pmod is never negative: numpy's % on int64 agrees.
    return (digests.view(np.int64) % shards).astype(np.int32)


def tag_shards(rows: pd.DataFrame, shards: int) -> pd.DataFrame:
    """Parsed rows -> the same rows with their shard; heartbeats once per shard.

    Args:
        rows: columns ``side, partition, offset, id, created_ms, error``.
        shards: how many shards the join runs.
    """
    bad = rows["error"].notna()
    heartbeats = rows[~bad & rows["id"].isna()]
    records = rows[~bad & rows["id"].notna()]
    tagged = [records.assign(shard=shard_of_ids(records["id"], shards)),
              rows[bad].assign(shard=(rows.loc[bad, "partition"] % shards).astype(np.int32))]  # fmt: skip
    tagged.extend(heartbeats.assign(shard=np.int32(shard)) for shard in range(shards))
    return stack(tagged, TAGGED_COLUMNS).astype({"shard": "int32", "side": "int32", "partition": "int32", "offset": "int64",
                       "created_ms": "Int64"})[TAGGED_COLUMNS]  # fmt: skip
