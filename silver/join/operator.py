"""The stateful join step: one shard's rows of a micro-batch through its engine.

Called by ``groupBy("shard_group").applyInPandasWithState`` on executors; pure
pandas and Arrow (no Spark import), so tests and the benchmark call it
directly. Besides the join's rows it emits one ``state`` row per shard and
batch (pending counts, snapshot size, expiry), which silver keeps to show the
state stays bounded. The rows arrive packed (``silver.join.source``) and leave
as the silver tables' files, written by the task (delta-rs), or packed.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from core.tables.task_files import TaskLanding, streaming_batch_id
from silver.blocks import BLOCK_ROWS, FILES, pack, unpack
from silver.join.engine import OUTPUT_COLUMNS, JoinEngine, JoinParams
from silver.join.schemas import JOINED_ARROW, OPERATOR_ARROW, REJECTS_ARROW, STATE_ARROW
from silver.join.sharding import TAGGED_ARROW, stack
from silver.schemas import JOIN_REJECTS, JOIN_STATE, JOINED

__all__ = ["JOIN_TABLES", "OPERATOR_COLUMNS", "join_blocks_with_state", "join_shard_rows",
           "join_tables"]  # fmt: skip

JOIN_TABLES = {JOINED[1]: (("matched", "unmatched"), JOINED_ARROW),
               JOIN_REJECTS[1]: (("late_right", "orphan_right", "duplicate", "quarantine"),
                                 REJECTS_ARROW),
               JOIN_STATE[1]: (("state",), STATE_ARROW)}  # fmt: skip
"""Each silver table of the join (by name, ``silver.schemas``): the ``record`` kinds it keeps and
its columns."""

OPERATOR_COLUMNS = ["shard", *OUTPUT_COLUMNS, "reason", "pending_left", "pending_right",
                    "state_bytes"]  # fmt: skip


def join_shard_rows(shard: int, rows: pd.DataFrame, snapshot: bytes | None,
                    params: JoinParams) -> tuple[pd.DataFrame, bytes]:  # fmt: skip
    """One shard's batch: emitted rows (``OPERATOR_COLUMNS``) and the new state bytes."""
    engine = JoinEngine.restore(params, snapshot)
    bad = rows[rows["error"].notna()]
    emitted = engine.process(rows[rows["error"].isna()])
    new_snapshot = engine.snapshot()
    quarantine = pd.DataFrame({
        "record": "quarantine", "id": bad["id"],
        "left_partition": bad["partition"].where(bad["side"] == 0),
        "left_offset": bad["offset"].where(bad["side"] == 0),
        "right_partition": bad["partition"].where(bad["side"] == 1),
        "right_offset": bad["offset"].where(bad["side"] == 1),
        "reason": bad["error"], "clock_ms": engine.state.clock,
    })  # fmt: skip
    status = pd.DataFrame([{"record": "state", "clock_ms": engine.state.clock,
                            "expiry_ms": engine.expiry(), "pending_left": len(engine.state.lefts),
                            "pending_right": len(engine.state.rights),
                            "state_bytes": len(new_snapshot)}])  # fmt: skip
    out = stack([emitted, quarantine, status], OPERATOR_COLUMNS)
    out["shard"] = shard
    return out, new_snapshot


def join_tables(out: pd.DataFrame, run_id: str, batch_id: int) -> dict[str, pa.Table]:
    """Emitted rows (``OPERATOR_COLUMNS``) -> each silver table's rows (:data:`JOIN_TABLES`)."""
    rows = out.assign(run_id=run_id, batch_id=batch_id)
    table = pa.Table.from_pandas(rows[OPERATOR_ARROW.names], schema=OPERATOR_ARROW,
                                 preserve_index=False)  # fmt: skip
    return {name: table.filter(pc.is_in(table["record"], pa.array(records))).select(schema.names)
            for name, (records, schema) in JOIN_TABLES.items()}  # fmt: skip


def join_blocks_with_state(key: tuple[Any, ...], frames: Iterator[pd.DataFrame], state: Any,
                           params: JoinParams, run_id: str,
                           land: TaskLanding | None) -> Iterator[pd.DataFrame]:  # fmt: skip
    """``applyInPandasWithState`` adapter: the state row holds the engine snapshot.

    Args:
        key: the shard's grouping key (it only places the shard on a partition).
        frames: block rows (``silver.join.source.JOIN_BLOCKS_DDL``) of one shard.
        state: the group state; its row holds the engine snapshot.
        params: the join's settings.
        run_id: the ``run_id`` column of the tables.
        land: write the tables' files here and pass on their file rows
            (delta-rs); None passes each table's rows on, packed.

    Yields:
        ``JOIN_OUTPUT_DDL`` rows.
    """
    blocks = pd.concat(list(frames), ignore_index=True)
    batch_id = streaming_batch_id()
    rows = unpack(blocks["block"], TAGGED_ARROW).to_pandas(
        types_mapper={pa.int64(): pd.Int64Dtype()}.get).astype({"offset": np.int64})  # fmt: skip
    previous = state.get[0] if state.exists else None
    shard = int(blocks["shard"].iloc[0])
    out, snapshot = join_shard_rows(shard, rows, previous, params)
    state.update((snapshot,))
    tables = join_tables(out, run_id, batch_id)
    if land is not None:
        tables = {FILES: pa.table(land(tables, batch_id, shard))}
    packed = [(kind, batch.num_rows, pack(batch)) for kind, table in tables.items()
              for batch in table.to_batches(BLOCK_ROWS) if batch.num_rows]  # fmt: skip
    yield pd.DataFrame(packed, columns=["kind", "rows", "block"])
