"""The workers: each one counts its tuples per tumbling window and serves them in a FIFO queue.

The WorkerBolt of seed 000: ``groupBy(worker)`` gets one worker's routed tuples
of a micro-batch, which it serves in the order the routing produced them (event
time, partition, offset, tuple), and returns

- *window partials*: per (worker window, key) the summed count and the tuples;
- *latency partials*: per (worker window, latency) how many tuples waited that
  long in the worker's FIFO queue (:class:`silver.queueing.FifoQueueModel`), with
  the window's first event time and last completion, for the makespan.

Gold adds partials up, so nothing per tuple leaves the worker's task. The state
between micro-batches is the worker's queue: its time origin and the completion
of its last tuple (kept with the worker windows' commits, see :mod:`silver.worker_queues`). Latencies are kept to three significant digits
(:func:`silver.queueing.latency_bucket`, as the simulator keeps them), so a
worker's latency rows per micro-batch are bounded by the range of its waits, not
by its tuples. Each partial row carries the run and the micro-batch that made
it, so a (window, worker, key) has one row per micro-batch that saw it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from core.gc_pause import gc_paused
from core.tables.task_files import TaskLanding
from silver.blocks import FILES, ROUTED_BLOCKS_ARROW, TUPLES, group_blocks, pack, pack_table, unpack
from silver.queueing import FifoQueueModel, latency_bucket

__all__ = ["LATENCY_ARROW", "PARTIAL_TARGETS", "QUEUE", "QUEUE_ARROW", "WINDOW_PARTIALS_ARROW",
           "WORKER_INPUT", "WORKER_INPUT_ARROW", "WORKER_LATENCY_ARROW", "WORKER_OUTPUT_DDL",
           "WORKER_WINDOWS_ARROW", "QueueState", "WorkerServing", "serve_worker",
           "serve_worker_group", "tuples_by_worker"]  # fmt: skip

# What a worker needs of a routed tuple.
WORKER_INPUT_ARROW = pa.schema([
    ("event_time_ms", pa.int64()), ("partition", pa.int32()), ("offset", pa.int64()),
    ("tuple_index", pa.int32()), ("key", pa.string()), ("count", pa.int64()),
    ("worker", pa.int32()),
])  # fmt: skip
WORKER_INPUT = tuple(WORKER_INPUT_ARROW.names)
_ORDER = ("event_time_ms", "partition", "offset", "tuple_index")

WINDOW_PARTIALS_ARROW = pa.schema([
    ("window_start_ms", pa.int64()), ("worker", pa.int32()), ("key", pa.string()),
    ("count", pa.int64()), ("tuples", pa.int64()), ("window_end_ms", pa.int64()),
])  # fmt: skip
LATENCY_ARROW = pa.schema([
    ("window_start_ms", pa.int64()), ("worker", pa.int32()), ("latency_ms", pa.float64()),
    ("tuples", pa.int64()), ("first_event_ms", pa.int64()), ("last_completion_ms", pa.float64()),
])  # fmt: skip
"""``last_completion_ms``: the window's last completion, in model ms after its start."""


def _tagged(schema: pa.Schema) -> pa.Schema:
    return pa.schema([pa.field("run_id", pa.string()), pa.field("batch_id", pa.int64()), *schema])


WORKER_WINDOWS_ARROW = _tagged(WINDOW_PARTIALS_ARROW)
WORKER_LATENCY_ARROW = _tagged(LATENCY_ARROW)
PARTIAL_TARGETS = {"latency": WORKER_LATENCY_ARROW, "windows": WORKER_WINDOWS_ARROW}
"""Each kind of partials (the target name of its table) and its table's schema."""

# The step's output: each kind of partials (or, landed, their files) and the
# queues, packed (``silver.blocks``), and the rows it passes through.
WORKER_OUTPUT_DDL = "kind STRING, rows LONG, block BINARY"
QUEUE = "queue"
"""A worker's queue after a micro-batch (``QUEUE_ARROW``)."""
QUEUE_ARROW = pa.schema([("worker", pa.int32()), ("origin_ms", pa.float64()),
                         ("last_completion_ms", pa.float64())])  # fmt: skip
QueueState = tuple[float, float]
"""A worker's FIFO queue between micro-batches: its time origin and its last completion."""


@dataclass(frozen=True)
class WorkerServing:
    """How the workers serve: window, queue model, the run, and where their tasks land files.

    Attributes:
        window_ms: the worker window.
        process_ms: service time per tuple.
        speed: event-time speed-up (arrivals at event time / speed).
        run_id: the run (it tags the partials).
        landing: where the tasks write the partials' files (delta-rs); None: packed rows.
    """

    window_ms: int
    process_ms: float
    speed: float
    run_id: str
    landing: TaskLanding | None = None
_WORKER_BLOCKS_ARROW = pa.schema([("worker_group", pa.int32()), ("worker", pa.int32()),
                                  ("rows", pa.int64()), ("block", pa.binary())])  # fmt: skip


def _windows(rows: pa.Table, starts: np.ndarray, worker: int, window_ms: int) -> pa.Table:
    table = pa.table({"window_start_ms": starts, "key": rows["key"], "count": rows["count"]})
    grouped = table.group_by(["window_start_ms", "key"], use_threads=False).aggregate(
        [("count", "sum"), ("count", "count", pc.CountOptions(mode="all"))]
    )
    begin = grouped["window_start_ms"]
    return pa.table({
        "window_start_ms": begin, "worker": pa.repeat(pa.scalar(worker, pa.int32()), len(grouped)),
        "key": grouped["key"], "count": grouped["count_sum"], "tuples": grouped["count_count"],
        "window_end_ms": pc.add(begin, window_ms),
    }, schema=WINDOW_PARTIALS_ARROW)  # fmt: skip


def _latencies(times: np.ndarray, latencies: np.ndarray, starts: np.ndarray, worker: int,
               speed: float) -> pa.Table:  # fmt: skip
    frame = pd.DataFrame({"window_start_ms": starts, "latency_ms": latency_bucket(latencies),
                          "event_ms": times,
                          "completion": (times - starts) / speed + latencies})  # fmt: skip
    per_window = frame.groupby("window_start_ms").agg(first_event_ms=("event_ms", "min"),
                                                      last_completion_ms=("completion", "max"))  # fmt: skip
    counts = frame.groupby(["window_start_ms", "latency_ms"]).size().rename("tuples").reset_index()
    out = counts.join(per_window, on="window_start_ms").assign(worker=worker)
    return pa.Table.from_pandas(out[LATENCY_ARROW.names], schema=LATENCY_ARROW,
                                preserve_index=False)  # fmt: skip


def serve_worker(rows: pa.Table, state: QueueState | None, window_ms: int,
                 process_ms: float, speed: float,
                 ) -> tuple[pa.Table, pa.Table, QueueState]:  # fmt: skip
    """One worker's tuples of a micro-batch -> its window and latency partials, and its new state.

    Args:
        rows: ``WORKER_INPUT`` columns, one worker's tuples in any order.
        state: ``(origin_ms, last_completion_ms)`` of the queue, None for a new worker.
        window_ms: the worker window.
        process_ms: service time per tuple.
        speed: event-time speed-up (arrivals at event time / speed).
    """
    order = np.lexsort([rows[name].to_numpy() for name in reversed(_ORDER)])
    rows = rows.take(pa.array(order))
    worker = int(rows["worker"][0].as_py())
    queue = FifoQueueModel(1, process_ms, speed)
    if state is not None:
        queue.origin_ms, queue.last_completion[0] = state
    times = rows["event_time_ms"].to_numpy()
    latencies = queue.add(np.zeros(len(times), np.int64), times)
    starts = times // window_ms * window_ms
    partials = _windows(rows, starts, worker, window_ms)
    waits = _latencies(times, latencies, starts, worker, speed)
    assert queue.origin_ms is not None  # noqa: S101 - set by the first add
    return partials, waits, (queue.origin_ms, float(queue.last_completion[0]))


def tuples_by_worker(routed: pa.Table, worker_keys: Sequence[int]) -> pa.RecordBatch:
    """A splitter's routed rows (``ROUTED_ARROW``) -> one ``tuples`` block row per worker present.

    Rows of ``silver.blocks.ROUTED_BLOCKS_DDL``, each for its worker's grouping key.
    """
    tuples = routed.filter(pc.equal(routed["record"], "tuple"))
    tuples = tuples.select(WORKER_INPUT_ARROW.names).cast(WORKER_INPUT_ARROW)
    blocks = group_blocks(tuples, tuples["worker"].to_numpy(), worker_keys, _WORKER_BLOCKS_ARROW)
    return pa.RecordBatch.from_arrays(
        [blocks.column("worker_group"), pa.repeat(pa.scalar(TUPLES), blocks.num_rows),
         blocks.column("rows"), blocks.column("block")], schema=ROUTED_BLOCKS_ARROW)  # fmt: skip


def _tag(table: pa.Table, schema: pa.Schema, run_id: str, batch_id: int) -> pa.Table:
    tags = [pa.repeat(pa.scalar(run_id, pa.string()), table.num_rows),
            pa.repeat(pa.scalar(batch_id, pa.int64()), table.num_rows)]  # fmt: skip
    return pa.Table.from_arrays([*tags, *table.columns], schema=schema)


def serve_worker_group(key: tuple[Any, ...], blocks: pd.DataFrame, serving: WorkerServing,
                       queues: Mapping[int, QueueState], batch_id: int) -> pd.DataFrame:  # fmt: skip
    """``applyInPandas`` step: one worker's packed tuples of a micro-batch -> its packed output.

    Takes ``silver.blocks.ROUTED_BLOCKS_DDL`` rows and returns ``WORKER_OUTPUT_DDL``
    rows: the worker's partials (their files' rows when ``serving`` lands them),
    its queue after the batch (``QUEUE_ARROW``), and, unchanged, the rows of
    other kinds than ``tuples`` (the routing's own output, bound for the sink).

    Args:
        key: the worker's grouping key.
        blocks: the group's rows.
        serving: the workers' settings.
        queues: each worker's queue before the batch (absent: a new worker).
        batch_id: the micro-batch (it tags the partials and names their files).
    """
    with gc_paused():
        is_tuples = (blocks["kind"] == TUPLES).to_numpy()
        out = list(blocks.loc[~is_tuples, ["kind", "rows", "block"]].itertuples(index=False))
        rows = unpack(blocks.loc[is_tuples, "block"], WORKER_INPUT_ARROW)
        if rows.num_rows:
            worker = int(rows["worker"][0].as_py())
            partials, waits, queue = serve_worker(rows, queues.get(worker), serving.window_ms,
                                                  serving.process_ms, serving.speed)  # fmt: skip
            tagged = {"latency": _tag(waits, WORKER_LATENCY_ARROW, serving.run_id, batch_id),
                      "windows": _tag(partials, WORKER_WINDOWS_ARROW, serving.run_id, batch_id)}  # fmt: skip
            if serving.landing is not None:
                files = pa.table(serving.landing(tagged, batch_id, worker))
                out += [(FILES, files.num_rows, block) for block in pack_table(files)]
            else:
                out += [(kind, table.num_rows, block) for kind, table in tagged.items()
                        for block in pack_table(table)]  # fmt: skip
            state = pa.table({"worker": [worker], "origin_ms": [queue[0]],
                              "last_completion_ms": [queue[1]]}, schema=QUEUE_ARROW)  # fmt: skip
            out.append((QUEUE, 1, pack(state)))
    return pd.DataFrame(out, columns=["kind", "rows", "block"])
