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
import pyarrow as pa
import pyarrow.compute as pc
import xxhash

from silver.join.schemas import PARSED_ARROW

__all__ = ["SHARD_HASH_SEED", "TAGGED_ARROW", "shard_of_ids", "tag_shards"]

TAGGED_ARROW = pa.schema([("shard", pa.int32()), *PARSED_ARROW])
"""Rows tagged with their shard (:func:`tag_shards`), as they travel to the join in blocks."""

SHARD_HASH_SEED = 42
"""The seed of Spark's ``xxhash64``: ids keep the shards the job gave them when Spark hashed them."""


def shard_of_ids(ids: pa.Array | pa.ChunkedArray, shards: int) -> np.ndarray:
    """Each id's shard (Arrow strings, no nulls), as Spark's ``pmod(xxhash64(id), shards)`` computes it."""
    # Their UTF-8 bytes as Python bytes: no string is decoded to be encoded again.
    utf8 = ids.cast(pa.binary()).to_numpy(zero_copy_only=False)
    digests = np.fromiter((xxhash.xxh64_intdigest(i, SHARD_HASH_SEED) for i in utf8),
                          dtype=np.uint64, count=len(utf8))  # fmt: skip
    # Spark's xxhash64 is a signed long and pmod is never negative: numpy's % on int64 agrees.
    return (digests.view(np.int64) % shards).astype(np.int32)


def tag_shards(rows: pa.Table, shards: int) -> pa.Table:
    """Parsed rows (:data:`PARSED_ARROW`) -> the same rows with their shard; heartbeats once per shard.

    Args:
        rows: parsed rows (``silver.join.parsing``).
        shards: how many shards the join runs.
    """
    rows = rows.select(PARSED_ARROW.names).cast(PARSED_ARROW)
    bad, has_id = pc.is_valid(rows["error"]), pc.is_valid(rows["id"])
    records = rows.filter(pc.and_(pc.invert(bad), has_id))
    failed = rows.filter(bad)
    heartbeats = rows.filter(pc.and_(pc.invert(bad), pc.invert(has_id)))
    parts = [(records, shard_of_ids(records["id"], shards)),
             (failed, failed["partition"].to_numpy() % shards),
             *((heartbeats, np.full(heartbeats.num_rows, shard)) for shard in range(shards))]  # fmt: skip
    # One chunk, so each shard's rows pack into as few blocks as before.
    return pa.concat_tables([pa.table([pa.array(shard, pa.int32()), *part.columns], schema=TAGGED_ARROW)
                             for part, shard in parts]).combine_chunks()  # fmt: skip
