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

import itertools
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from core.gc_pause import gc_paused
from core.tables.task_files import TaskLanding
from core.windows import window_end, window_start
from silver.blocks import FILES, ROUTED_BLOCKS_ARROW, TUPLES, group_blocks, pack, pack_table, unpack
from silver.queueing import FifoQueueModel, latency_bucket
from silver.work import spend_cpu

__all__ = ["BUSY", "LATENCY_ARROW", "PARTIAL_TARGETS", "QUEUE", "QUEUE_ARROW", "WINDOW_PARTIALS_ARROW",
           "WORKER_BUSY_ARROW", "WORKER_INPUT", "WORKER_INPUT_ARROW", "WORKER_LATENCY_ARROW", "WORKER_OUTPUT_DDL",
           "WORKER_WINDOWS_ARROW", "QueueState", "WorkerServing", "serve_tuples",
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
_BUSY_ARROW = pa.schema([("worker", pa.int32()), ("tuples", pa.int64()), ("busy_s", pa.float64()),
                         ("wall_s", pa.float64())])  # fmt: skip
WORKER_BUSY_ARROW = _tagged(_BUSY_ARROW)
"""Physical mode: what serving a worker's tuples of a micro-batch really cost its task
(``busy_s``: CPU seconds of its thread, the work included; ``wall_s``: wall-clock seconds)."""
PARTIAL_TARGETS = {"latency": WORKER_LATENCY_ARROW, "windows": WORKER_WINDOWS_ARROW}
"""Each kind of partials (the target name of its table) and its table's schema."""
BUSY = "busy"
"""The target name of the workers' busy time (physical mode only)."""

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
        cpu_work: physical mode: each worker also spends ``process_ms`` of CPU per tuple
            (:func:`silver.work.spend_cpu`) and reports its busy time (``BUSY``).
    """

    window_ms: int
    process_ms: float
    speed: float
    run_id: str
    landing: TaskLanding | None = None
    cpu_work: bool = False
_WORKER_BLOCKS_ARROW = pa.schema([("worker_group", pa.int32()), ("worker", pa.int32()),
                                  ("rows", pa.int64()), ("block", pa.binary())])  # fmt: skip


def _windows(rows: pa.Table, starts: np.ndarray, window_ms: int) -> pa.Table:
    table = pa.table({"window_start_ms": starts, "worker": rows["worker"], "key": rows["key"],
                      "count": rows["count"]})  # fmt: skip
    grouped = table.group_by(["window_start_ms", "worker", "key"], use_threads=False).aggregate(
        [("count", "sum"), ("count", "count", pc.CountOptions(mode="all"))]
    )
    begin = grouped["window_start_ms"]
    return pa.table({
        "window_start_ms": begin, "worker": grouped["worker"], "key": grouped["key"],
        "count": grouped["count_sum"], "tuples": grouped["count_count"],
        "window_end_ms": window_end(begin.to_numpy(), window_ms),
    }, schema=WINDOW_PARTIALS_ARROW)  # fmt: skip


def _latencies(times: np.ndarray, workers: np.ndarray, latencies: np.ndarray, starts: np.ndarray,
               speed: float) -> pa.Table:  # fmt: skip
    """Per worker and window: tuples per rounded latency, the first event and the last completion.

    The rows are sorted by worker, then event time: each (worker, window) is one run.
    """
    table = pa.table({"window_start_ms": starts, "worker": pa.array(workers, pa.int32()),
                      "latency_ms": latency_bucket(latencies), "event_ms": times,
                      "completion": (times - starts) / speed + latencies})  # fmt: skip
    counts = table.group_by(["window_start_ms", "worker", "latency_ms"], use_threads=False).aggregate(
        [("latency_ms", "count", pc.CountOptions(mode="all"))])
    extremes = table.group_by(["window_start_ms", "worker"], use_threads=False).aggregate(
        [("event_ms", "min"), ("completion", "max")])
    out = counts.join(extremes, ["window_start_ms", "worker"], use_threads=False)
    return pa.table({
        "window_start_ms": out["window_start_ms"], "worker": out["worker"],
        "latency_ms": out["latency_ms"], "tuples": out["latency_ms_count"],
        "first_event_ms": out["event_ms_min"], "last_completion_ms": out["completion_max"],
    }, schema=LATENCY_ARROW)  # fmt: skip


def serve_tuples(rows: pa.Table, queues: Mapping[int, QueueState], window_ms: int,
                 process_ms: float, speed: float,
                 ) -> tuple[pa.Table, pa.Table, dict[int, QueueState]]:  # fmt: skip
    """Workers' tuples of a micro-batch -> their window and latency partials, and their queues after.

    Each worker serves its own tuples in stream order (event time, partition,
    offset, tuple) in its own FIFO queue; the rows may hold one worker's tuples
    (a Spark worker's task) or many (the simulator), in any order.

    Args:
        rows: ``WORKER_INPUT`` columns.
        queues: each worker's ``(origin_ms, last_completion_ms)`` before the batch
            (absent: a new worker).
        window_ms: the worker window.
        process_ms: service time per tuple.
        speed: event-time speed-up (arrivals at event time / speed).
    """
    order = np.lexsort([rows[name].to_numpy() for name in reversed(("worker", *_ORDER))])
    rows = rows.take(pa.array(order))
    workers = rows["worker"].to_numpy()
    times = rows["event_time_ms"].to_numpy()
    latencies = np.empty(len(times))
    after: dict[int, QueueState] = {}
    edges = [0, *(np.flatnonzero(np.diff(workers)) + 1).tolist(), len(times)]
    for begin, end in itertools.pairwise(edges):
        worker = int(workers[begin])
        queue = FifoQueueModel(1, process_ms, speed)
        if worker in queues:
            queue.origin_ms, queue.last_completion[0] = queues[worker]
        latencies[begin:end] = queue.add(np.zeros(end - begin, np.int64), times[begin:end])
        assert queue.origin_ms is not None  # noqa: S101 - set by the first add
        after[worker] = (queue.origin_ms, float(queue.last_completion[0]))
    starts = window_start(times, window_ms)
    return (_windows(rows, starts, window_ms), _latencies(times, workers, latencies, starts, speed),
            after)  # fmt: skip


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
            started_cpu, started = time.thread_time(), time.perf_counter()
            partials, waits, served = serve_tuples(rows, queues, serving.window_ms,
                                                   serving.process_ms, serving.speed)  # fmt: skip
            queue = served[worker]
            tagged = {"latency": _tag(waits, WORKER_LATENCY_ARROW, serving.run_id, batch_id),
                      "windows": _tag(partials, WORKER_WINDOWS_ARROW, serving.run_id, batch_id)}  # fmt: skip
            if serving.cpu_work:
                spend_cpu(rows.num_rows * serving.process_ms / 1000)
                busy = pa.table({"worker": [worker], "tuples": [rows.num_rows],
                                 "busy_s": [time.thread_time() - started_cpu],
                                 "wall_s": [time.perf_counter() - started]}, schema=_BUSY_ARROW)  # fmt: skip
                tagged[BUSY] = _tag(busy, WORKER_BUSY_ARROW, serving.run_id, batch_id)
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
