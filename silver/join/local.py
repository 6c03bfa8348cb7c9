"""The join without Spark: the same sharding and operator, batch by batch, in this process.

Used by the unit tests and the benchmark; the Spark job calls the very same
functions (:func:`tag_shards`, :func:`join_shard_rows`) on its executors.
"""

from __future__ import annotations

from collections.abc import Iterable

import pandas as pd

from silver.join.engine import JoinParams
from silver.join.operator import OPERATOR_COLUMNS, join_shard_rows
from silver.join.sharding import tag_shards

__all__ = ["LocalJoin", "generated_batches"]


class LocalJoin:
    """Shards with their state bytes, fed one micro-batch at a time."""

    def __init__(self, params: JoinParams, shards: int = 2) -> None:
        """Start with empty state."""
        self.params = params
        self.shards = shards
        self.snapshots: dict[int, bytes | None] = dict.fromkeys(range(shards))

    def process(self, batch: pd.DataFrame) -> pd.DataFrame:
        """One micro-batch of parsed rows -> every shard's emitted rows."""
        tagged = tag_shards(batch, self.shards)
        outputs = []
        for shard, rows in tagged.groupby("shard", sort=True):
            out, self.snapshots[int(shard)] = join_shard_rows(int(shard), rows,
                                                              self.snapshots[int(shard)], self.params)  # fmt: skip
            outputs.append(out)
        if not outputs:
            return pd.DataFrame(columns=OPERATOR_COLUMNS)
        return pd.concat(outputs, ignore_index=True)

    def run(self, batches: Iterable[pd.DataFrame]) -> pd.DataFrame:
        """Every batch in turn; all emitted rows."""
        return pd.concat([self.process(batch) for batch in batches], ignore_index=True)

    def state_bytes(self) -> int:
        """Total size of the shards' snapshots."""
        return sum(len(s or b"") for s in self.snapshots.values())


def generated_batches(records: pd.DataFrame, batch_size: int) -> Iterable[pd.DataFrame]:
    """Generator rows (arrival order) as parsed micro-batches with per-partition offsets."""
    frame = records.assign(error=None)
    frame["offset"] = frame.groupby(["side", "partition"]).cumcount().astype("int64")
    frame = frame[["side", "partition", "offset", "id", "created_ms", "error"]]
    for start in range(0, len(frame), batch_size):
        yield frame.iloc[start : start + batch_size]
