"""The workers: each one counts its tuples per tumbling window and serves them in a FIFO queue.

The WorkerBolt of seed 000, as a stateful step: ``groupBy(worker)`` gets one
worker's routed tuples of a micro-batch, in the order the routing produced them
(silver commit, then event time, partition, offset, tuple), and returns

- *window partials*: per (worker window, key) the summed count and the tuples;
- *latency partials*: per (worker window, latency) how many tuples waited that
  long in the worker's FIFO queue (:class:`silver.queueing.FifoQueueModel`), with
  the window's first event time and last completion, for the makespan.

Gold adds partials up, so nothing per tuple leaves the worker's task. The state
between micro-batches is the worker's queue: its time origin and the completion
of its last tuple. Latencies are kept to three significant digits
(:func:`silver.queueing.latency_bucket`, as the simulator keeps them), so a
worker's latency rows per micro-batch are bounded by the range of its waits, not
by its tuples.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from core.gc_pause import gc_paused
from silver.blocks import pack_table, unpack
from silver.queueing import FifoQueueModel, latency_bucket

__all__ = ["LATENCY_ARROW", "QUEUE_STATE_DDL", "WINDOW_PARTIALS_ARROW", "WORKER_INPUT",
           "WORKER_INPUT_ARROW", "WORKER_OUTPUT_DDL", "serve_worker", "serve_worker_blocks"]  # fmt: skip

# What a worker needs of a routed tuple; ``version`` is the silver commit it came in.
WORKER_INPUT_ARROW = pa.schema([
    ("version", pa.int64()), ("event_time_ms", pa.int64()), ("partition", pa.int32()),
    ("offset", pa.int64()), ("tuple_index", pa.int32()), ("key", pa.string()),
    ("count", pa.int64()), ("worker", pa.int32()),
])  # fmt: skip
WORKER_INPUT = tuple(WORKER_INPUT_ARROW.names)
_ORDER = ("version", "event_time_ms", "partition", "offset", "tuple_index")

WINDOW_PARTIALS_ARROW = pa.schema([
    ("window_start_ms", pa.int64()), ("worker", pa.int32()), ("key", pa.string()),
    ("count", pa.int64()), ("tuples", pa.int64()), ("window_end_ms", pa.int64()),
])  # fmt: skip
LATENCY_ARROW = pa.schema([
    ("window_start_ms", pa.int64()), ("worker", pa.int32()), ("latency_ms", pa.float64()),
    ("tuples", pa.int64()), ("first_event_ms", pa.int64()), ("last_completion_ms", pa.float64()),
])  # fmt: skip
"""``last_completion_ms``: the window's last completion, in model ms after its start."""

# The step's output: each kind of partials, packed (``silver.blocks``).
WORKER_OUTPUT_DDL = "kind STRING, rows LONG, block BINARY"
QUEUE_STATE_DDL = "origin_ms DOUBLE, last_completion_ms DOUBLE"


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


def serve_worker(rows: pa.Table, state: tuple[float, float] | None, window_ms: int,
                 process_ms: float, speed: float,
                 ) -> tuple[pa.Table, pa.Table, tuple[float, float]]:  # fmt: skip
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


def serve_worker_blocks(key: tuple[Any, ...], frames: Iterator[pd.DataFrame], state: Any,
                        window_ms: int, process_ms: float,
                        speed: float) -> Iterator[pd.DataFrame]:  # fmt: skip
    """``applyInPandasWithState`` adapter: one worker's packed tuples -> packed partials.

    Takes ``WORKER_BLOCKS_DDL`` rows (``silver.routed_source``) and yields
    ``WORKER_OUTPUT_DDL`` rows; the state row holds the worker's queue.
    """
    with gc_paused():
        blocks = pd.concat(list(frames), ignore_index=True)
        rows = unpack(blocks["block"], WORKER_INPUT_ARROW)
        if rows.num_rows == 0:
            return
        previous = tuple(state.get) if state.exists else None
        partials, waits, queue = serve_worker(rows, previous, window_ms, process_ms, speed)
        out = [(kind, table.num_rows, block) for kind, table in
               (("windows", partials), ("latency", waits)) for block in pack_table(table)]  # fmt: skip
    state.update(queue)
    yield pd.DataFrame(out, columns=["kind", "rows", "block"])
