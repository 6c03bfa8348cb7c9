"""The stateful join step: one shard's rows of a micro-batch through its engine.

Called by ``groupBy("shard_group").applyInPandasWithState`` on executors; pure
Arrow (no Spark import) behind that pandas adapter, so tests and the benchmark
call it directly. Besides the join's rows it emits one ``state`` row per shard and
batch (pending counts, snapshot size, expiry), which silver keeps to show the
state stays bounded. The rows arrive packed (``silver.join.source``) and leave
as the silver tables' files, written by the task (delta-rs), or packed.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from core.tables.task_files import TaskLanding, streaming_batch_id
from silver.blocks import BLOCK_ROWS, FILES, pack, unpack
from silver.join.engine import OFFSET_ORDER, OUTPUT_COLUMNS, JoinEngine, JoinParams
from silver.join.schemas import (
    JOINED_ARROW,
    OPERATOR_ARROW,
    REJECTS_ARROW,
    STATE_ARROW,
    table_of,
)
from silver.join.sharding import TAGGED_ARROW
from silver.schemas import JOIN_REJECTS, JOIN_STATE, JOINED

__all__ = ["EMITTED_ARROW", "JOIN_TABLES", "join_blocks_with_state", "join_shard_rows",
           "join_tables"]  # fmt: skip

JOIN_TABLES = {JOINED[1]: (("matched", "unmatched"), JOINED_ARROW),
               JOIN_REJECTS[1]: (("late_right", "orphan_right", "duplicate", "quarantine"),
                                 REJECTS_ARROW),
               JOIN_STATE[1]: (("state",), STATE_ARROW)}  # fmt: skip
"""Each silver table of the join (by name, ``silver.schemas``): the ``record`` kinds it keeps and
its columns."""

EMITTED_ARROW = pa.schema([OPERATOR_ARROW.field(name) for name in
                           ("shard", *OUTPUT_COLUMNS, "reason", "pending_left", "pending_right",
                            "state_bytes")])  # fmt: skip
"""What :func:`join_shard_rows` emits: the operator's columns but the run's and the batch's."""


def _on_side(bad: pa.Table, side: int, column: str) -> pa.ChunkedArray:
    """``column`` of the rows read from ``side``'s topic, null on the others'."""
    return pc.if_else(pc.equal(bad["side"], side), bad[column], pa.scalar(None, bad[column].type))


def join_shard_rows(shard: int, rows: pa.Table, snapshot: bytes | None,
                    params: JoinParams) -> tuple[pa.Table, bytes]:  # fmt: skip
    """One shard's batch of parsed rows -> emitted rows (:data:`EMITTED_ARROW`) and the new state bytes."""
    engine = JoinEngine.restore(params, snapshot)
    failed = pc.is_valid(rows["error"])
    # In offset order, as the engine takes the rest: the order a shard's blocks arrive in
    # may differ on a replay, whose files must hold the same bytes.
    bad = rows.filter(failed)
    bad = bad.take(pc.sort_indices(bad, OFFSET_ORDER))
    emitted = engine.process(rows.filter(pc.invert(failed)))
    new_snapshot = engine.snapshot()
    clock = pa.scalar(engine.state.clock, pa.int64())
    quarantine = table_of(EMITTED_ARROW, bad.num_rows, record=pa.repeat("quarantine", bad.num_rows),
                          id=bad["id"], left_partition=_on_side(bad, 0, "partition"),
                          left_offset=_on_side(bad, 0, "offset"),
                          right_partition=_on_side(bad, 1, "partition"),
                          right_offset=_on_side(bad, 1, "offset"), reason=bad["error"],
                          clock_ms=pa.repeat(clock, bad.num_rows))  # fmt: skip
    status = table_of(EMITTED_ARROW, 1, record=pa.array(["state"]), clock_ms=pa.repeat(clock, 1),
                      expiry_ms=pa.array([engine.expiry()], pa.int64()),
                      pending_left=pa.array([engine.state.lefts.num_rows], pa.int64()),
                      pending_right=pa.array([engine.state.rights.num_rows], pa.int64()),
                      state_bytes=pa.array([len(new_snapshot)], pa.int64()))  # fmt: skip
    # One chunk: each chunk would otherwise become a block (and a row group) of its own.
    out = pa.concat_tables([table_of(EMITTED_ARROW, emitted.num_rows, **dict(zip(
        emitted.column_names, emitted.columns, strict=True))), quarantine, status]).combine_chunks()  # fmt: skip
    return out.set_column(0, "shard", pa.repeat(pa.scalar(shard, pa.int32()), out.num_rows)), new_snapshot


def join_tables(out: pa.Table, run_id: str, batch_id: int) -> dict[str, pa.Table]:
    """Emitted rows (:data:`EMITTED_ARROW`) -> each silver table's rows (:data:`JOIN_TABLES`)."""
    table = out.append_column("run_id", pa.repeat(run_id, out.num_rows)).append_column(
        "batch_id", pa.repeat(batch_id, out.num_rows))
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
    previous = state.get[0] if state.exists else None
    shard = int(blocks["shard"].iloc[0])
    out, snapshot = join_shard_rows(shard, unpack(blocks["block"], TAGGED_ARROW), previous, params)
    state.update((snapshot,))
    tables = join_tables(out, run_id, batch_id)
    if land is not None:
        tables = {FILES: pa.table(land(tables, batch_id, shard))}
    packed = [(kind, batch.num_rows, pack(batch)) for kind, table in tables.items()
              for batch in table.to_batches(BLOCK_ROWS) if batch.num_rows]  # fmt: skip
    yield pd.DataFrame(packed, columns=["kind", "rows", "block"])
