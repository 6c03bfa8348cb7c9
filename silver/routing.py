"""The routing step: one splitter's rows through its grouping, state in bytes.

Called by ``groupBy("splitter").applyInPandasWithState`` on executors with the
splitter's bronze rows, which are parsed first. Rows are
routed in (partition, offset, tuple_index) order, so a replayed micro-batch with
the same restored state routes identically. Quarantined rows pass through with
worker -1 so the writer can account for every bronze message in one batch.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from core.gc_pause import gc_paused
from core.run_plan import RunPlan
from core.tables.task_files import TASK_FILES_ARROW, TaskLanding, streaming_batch_id
from silver.blocks import FILES, ROUTED, pack_table, unpack
from silver.groupings.registry import grouping_class
from silver.parsing import parse_raw_events
from silver.schemas import ROUTED_ARROW, split_routed
from silver.workers import tuples_by_worker

__all__ = ["Routing", "route_blocks_with_state", "route_splitter_rows", "snapshot_row"]


@dataclass(frozen=True)
class Routing:
    """What the routing step needs of a run, shipped to the tasks with it: how messages parse,
    how many splitters route them, and which grouping over how many workers."""

    source_type: str
    splitters: int
    grouping: str
    workers: int
    params: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, plan: RunPlan) -> Routing:
        """The plan's routing."""
        return cls(plan.source_type, plan.splitters, plan.grouping, plan.workers, dict(plan.params))


def route_splitter_rows(rows: pa.Table, state: bytes | None, grouping: str, workers: int,
                        params: dict[str, Any]) -> tuple[pa.Table, bytes]:  # fmt: skip
    """Route one splitter's parsed rows (``PARSED_ARROW``) of a micro-batch.

    Returns them as ``ROUTED_ARROW`` rows in routing order, with ``worker`` and
    ``record``, and the grouping's new state.
    """
    cls = grouping_class(grouping)
    router = cls.restore(workers, cls.params_type(**params), state)
    # A quarantined message has no tuple_index; it sorts before any tuple, as none shares its offset.
    order = np.lexsort([pc.fill_null(rows[name], -1).to_numpy()
                        for name in ("tuple_index", "offset", "partition")])  # fmt: skip
    # One chunk either way: the silver tables' Parquet pages and the blocks then follow from
    # the rows alone, not from how the read tasks happened to split them.
    rows = rows.take(order) if (np.diff(order) < 0).any() else rows.combine_chunks()
    parsed = rows["error"].is_null()
    routed = np.full(rows.num_rows, -1, dtype=np.int32)
    if (parsed_rows := parsed.to_numpy(zero_copy_only=False)).any():
        tuples = rows.filter(parsed) if not parsed_rows.all() else rows
        routed[parsed_rows] = router.route(tuples["key"], tuples["event_time_ms"].to_numpy())
    routed_rows = rows.append_column("worker", pa.array(routed)).append_column(
        "record", pc.if_else(parsed, "tuple", "quarantine"))
    return routed_rows.select(ROUTED_ARROW.names).cast(ROUTED_ARROW), router.snapshot()


def snapshot_row(rows: pa.Table, snapshot: bytes) -> pa.Table:
    """The splitter's state after a batch, as a ``snapshot`` record (for gold.hot_keys)."""
    last = pc.max(rows["event_time_ms"]).as_py()
    return pa.Table.from_pylist([{
        "run_id": rows["run_id"][0].as_py(), "splitter": rows["splitter"][0].as_py(),
        "partition": -1, "offset": -1, "event_time_ms": last, "payload": snapshot, "worker": -2,
        "record": "snapshot",
    }], schema=ROUTED_ARROW)  # fmt: skip


def route_blocks_with_state(
    key: tuple[Any, ...], frames: Iterator[pd.DataFrame], state: Any, routing: Routing,
    worker_keys: Sequence[int], land: TaskLanding | None, snapshot_every: int = 1,
) -> Iterator[pd.DataFrame]:  # fmt: skip
    """``applyInPandasWithState`` adapter: one splitter's packed bronze rows, parsed and routed.

    Takes ``BRONZE_BLOCKS_DDL`` rows and yields ``ROUTED_BLOCKS_DDL`` rows
    (``silver.blocks``): the routed tuples packed per worker, for the workers'
    step, and the splitter's routed tuples, quarantined messages and snapshot
    record, bound for the silver tables (through the workers' step, which passes
    them on). ``files`` rows in (bronze files landed by the read tasks) are
    passed on with the step's own files. The state row holds the grouping snapshot.

    Args:
        worker_keys: the workers' grouping keys.
        land: write the silver tables' files here and pass on their file rows
            (delta-rs); None passes the rows on, packed.
        snapshot_every: the snapshot record goes out with every micro-batch whose
            id this divides (the state row is updated with each).
    """
    with gc_paused():
        blocks = pd.concat(list(frames), ignore_index=True)
        landed = (blocks["kind"] == FILES).to_numpy()
        raw = unpack(blocks.loc[~landed, "block"])
        rows = parse_raw_events(raw, routing.source_type, routing.splitters)
        previous = state.get[0] if state.exists else None
        routed, snapshot = route_splitter_rows(rows, previous, routing.grouping, routing.workers,
                                               routing.params)  # fmt: skip
        recorded = snapshot_every == 1 or streaming_batch_id() % snapshot_every == 0
        table = pa.concat_tables([routed, *([snapshot_row(rows, snapshot)] if recorded else [])])
        splitter = int(blocks["splitter"].iloc[0])
        if land is not None:  # with the bronze files the read tasks landed, if any
            files = pa.concat_tables([unpack(blocks.loc[landed, "block"], TASK_FILES_ARROW),
                                      pa.table(land(split_routed(table), streaming_batch_id(), splitter))])  # fmt: skip
            own = [(FILES, files.num_rows, block) for block in pack_table(files)]
        else:
            own = [(ROUTED, table.num_rows, block) for block in pack_table(table)]
        per_worker = tuples_by_worker(table, worker_keys).to_pandas()
    state.update((snapshot,))
    # The splitter's own output rides with one worker's tuples: any group would do.
    passed = pd.DataFrame(own, columns=["kind", "rows", "block"])
    passed.insert(0, "worker_group", worker_keys[splitter % routing.workers])
    yield pd.concat([passed, per_worker], ignore_index=True)
