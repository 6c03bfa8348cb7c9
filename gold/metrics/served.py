"""The simulator's way into the metrics: routed tuples, served as the pipeline's workers serve them.

``dkg simulate`` (and ``dkg advise``) route tuples in-process; each batch's
tuples are served by :func:`silver.workers.serve_tuples`, the function the
Spark workers run, and its partials are added up by
:class:`gold.metrics.partials.RunPartials`, the engine of gold's refresh. A
simulated run and a pipeline run of the same routing therefore give the same
figures by construction, not by two implementations agreeing.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from gold.metrics.partials import RunPartials
from gold.metrics.summary import RunMetrics
from silver.workers import WORKER_INPUT_ARROW, QueueState, serve_tuples

__all__ = ["ServedTuples"]


class ServedTuples:
    """A run's routed tuples, fed batch by batch in stream order.

    Args:
        workers: W.
        worker_window_ms: the workers' tumbling window.
        window_ms: the aggregation window (a multiple of ``worker_window_ms``).
        process_ms: the queue model's service time per tuple.
        speed: the queue model's event-time speed-up.
    """

    def __init__(self, workers: int, worker_window_ms: int, window_ms: int, process_ms: float,
                 speed: float) -> None:  # fmt: skip
        if workers < 1 or worker_window_ms <= 0 or window_ms <= 0:
            raise ValueError("workers and windows must be positive")
        self.workers, self.worker_window_ms = workers, worker_window_ms
        self.process_ms, self.speed = process_ms, speed
        self.partials = RunPartials(workers, window_ms, speed, process_ms)
        self._queues: dict[int, QueueState] = {}
        self._fed = 0  # tuples so far: each tuple's offset, so order within a time is kept

    def add(self, keys: np.ndarray, workers: np.ndarray, event_times_ms: np.ndarray,
            counts: np.ndarray | None = None) -> None:  # fmt: skip
        """Serve a batch of routed tuples (in stream order)."""
        n = len(keys)
        if n == 0:
            return
        table = pa.table({
            "event_time_ms": np.asarray(event_times_ms, np.int64),
            "partition": np.zeros(n, np.int32),
            "offset": np.arange(self._fed, self._fed + n, dtype=np.int64),
            "tuple_index": np.zeros(n, np.int32),
            "key": np.asarray(keys, dtype=object),
            "count": np.ones(n, np.int64) if counts is None else np.asarray(counts, np.int64),
            "worker": np.asarray(workers, dtype=np.int32),
        }, schema=WORKER_INPUT_ARROW)  # fmt: skip
        self._fed += n
        windows, waits, served = serve_tuples(table, self._queues, self.worker_window_ms,
                                              self.process_ms, self.speed)  # fmt: skip
        self._queues.update(served)
        self.partials.add_windows(windows)
        self.partials.add_latency(waits)

    def result(self, processing_seconds: float) -> RunMetrics:
        """The metrics so far; ``processing_seconds``: the routing's time (the throughput)."""
        return self.partials.result(processing_seconds)
