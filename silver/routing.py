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

from core.gc_pause import gc_paused
from core.run_plan import RunPlan
from core.tables.task_files import TASK_FILES_ARROW, TaskLanding, streaming_batch_id
from silver.blocks import FILES, ROUTED, pack_table, unpack
from silver.groupings.registry import grouping_class
from silver.parsing import parse_raw_events
from silver.schemas import ROUTED_ARROW, split_routed
from silver.workers import tuples_by_worker

__all__ = ["ROUTED_COLUMNS", "Routing", "route_blocks_with_state", "route_splitter_rows",
           "snapshot_row"]  # fmt: skip

ROUTED_COLUMNS = ["splitter", "partition", "offset", "tuple_index", "count", "event_time_ms",
                  "worker", "run_id", "key", "error", "payload", "record"]  # fmt: skip


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


def route_splitter_rows(
    rows: pd.DataFrame, state: bytes | None, grouping: str, workers: int, params: dict[str, Any]
) -> tuple[pd.DataFrame, bytes]:
    """Route one splitter's rows of a micro-batch; returns them with ``worker`` and the new state."""
    cls = grouping_class(grouping)
    router = cls.restore(workers, cls.params_type(**params), state)
    ordered = rows.sort_values(["partition", "offset", "tuple_index"], kind="stable",
                               na_position="first").reset_index(drop=True)  # fmt: skip
    parsed = ordered["error"].isna().to_numpy()
    routed = np.full(len(ordered), -1, dtype=np.int32)
    if parsed.any():
        keys = ordered.loc[parsed, "key"].to_numpy(dtype=object)
        times = ordered.loc[parsed, "event_time_ms"].to_numpy(dtype=np.int64)
        routed[parsed] = router.route(keys, times)
    ordered["worker"] = routed
    ordered["record"] = np.where(parsed, "tuple", "quarantine")
    return ordered[ROUTED_COLUMNS], router.snapshot()


def snapshot_row(rows: pd.DataFrame, snapshot: bytes) -> pd.DataFrame:
    """The splitter's state after a batch, as a ``snapshot`` record (for gold.hot_keys)."""
    times = rows["event_time_ms"].dropna()
    return pd.DataFrame([{
        "run_id": rows["run_id"].iloc[0], "splitter": int(rows["splitter"].iloc[0]),
        "partition": -1, "offset": -1, "tuple_index": None, "key": None, "count": None,
        "event_time_ms": int(times.max()) if len(times) else None, "error": None,
        "payload": snapshot, "worker": -2, "record": "snapshot",
    }], columns=ROUTED_COLUMNS)  # fmt: skip


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
        raw = unpack(blocks.loc[~landed, "block"]).to_pandas()
        rows = parse_raw_events(raw, routing.source_type, routing.splitters)
        previous = state.get[0] if state.exists else None
        routed, snapshot = route_splitter_rows(rows, previous, routing.grouping, routing.workers,
                                               routing.params)  # fmt: skip
        recorded = snapshot_every == 1 or streaming_batch_id() % snapshot_every == 0
        table = pa.concat_tables(
            pa.Table.from_pandas(frame, schema=ROUTED_ARROW, preserve_index=False)
            for frame in (routed, *([snapshot_row(rows, snapshot)] if recorded else []))
        )
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
