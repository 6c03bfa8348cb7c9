"""The join without Spark: the same sharding and operator, batch by batch, in this process.

Used by the unit tests and the benchmark; the Spark job calls the very same
functions (:func:`tag_shards`, :func:`join_shard_rows`) on its executors.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd
import pyarrow as pa

from silver.join.engine import JoinParams
from silver.join.operator import EMITTED_ARROW, join_shard_rows
from silver.join.schemas import PARSED_ARROW
from silver.join.sharding import tag_shards

__all__ = ["LocalJoin", "as_pandas", "generated_batches"]


def as_pandas(table: pa.Table) -> pd.DataFrame:
    """Arrow rows as pandas, integer columns with nulls kept as integers (not floats)."""
    return table.to_pandas(types_mapper={pa.int64(): pd.Int64Dtype(),
                                         pa.int32(): pd.Int32Dtype()}.get)  # fmt: skip


class LocalJoin:
    """Shards with their state bytes, fed one micro-batch at a time."""

    def __init__(self, params: JoinParams, shards: int = 2) -> None:
        """Start with empty state."""
        self.params = params
        self.shards = shards
        self.snapshots: dict[int, bytes | None] = dict.fromkeys(range(shards))

    def process(self, batch: pd.DataFrame) -> pa.Table:
        """One micro-batch of parsed rows (``PARSED_ARROW`` columns) -> every shard's emitted rows."""
        parsed = pa.Table.from_pandas(batch, schema=PARSED_ARROW, preserve_index=False)
        tagged = tag_shards(parsed, self.shards)
        shards = tagged["shard"].to_numpy()
        outputs = []
        for shard in np.unique(shards).tolist():
            out, self.snapshots[shard] = join_shard_rows(shard, tagged.filter(pa.array(shards == shard)),
                                                         self.snapshots[shard], self.params)  # fmt: skip
            outputs.append(out)
        return pa.concat_tables(outputs) if outputs else EMITTED_ARROW.empty_table()

    def run(self, batches: Iterable[pd.DataFrame]) -> pd.DataFrame:
        """Every batch in turn; all emitted rows, as pandas."""
        return as_pandas(pa.concat_tables([self.process(batch) for batch in batches]))

    def state_bytes(self) -> int:
        """Total size of the shards' snapshots."""
        return sum(len(s or b"") for s in self.snapshots.values())


def generated_batches(records: pd.DataFrame, batch_size: int) -> Iterable[pd.DataFrame]:
    """Generator rows (arrival order) as parsed micro-batches with per-partition offsets."""
    frame = records.assign(error=None)
    frame["offset"] = frame.groupby(["side", "partition"]).cumcount().astype("int64")
    frame = frame[PARSED_ARROW.names]
    for start in range(0, len(frame), batch_size):
        yield frame.iloc[start : start + batch_size]
