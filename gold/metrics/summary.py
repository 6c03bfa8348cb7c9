"""Every metric of a run, cumulative and per tumbling event-time window.

Tuples are fed batch by batch as ``(key_id, worker, event_time_ms)``; key ids
are 64-bit integer identities (the routing fingerprints), never strings, so the
distinct-pair counts stay cheap for millions of tuples.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from gold.metrics.balance import balance_metrics
from silver.queueing import FifoQueueModel, latency_bucket

__all__ = ["MetricRow", "RunMetrics", "RunMetricsAccumulator"]


@dataclass(frozen=True)
class MetricRow:
    """The metrics of one scope: ``cumulative`` (the whole run) or one ``window``.

    ``throughput`` is routed tuples per second of processing for the whole run;
    a window repeats the run's value (processing time is not split by window).
    Latency percentiles are linear-interpolated (numpy's default) over latencies kept to
    three significant digits (:func:`silver.queueing.latency_bucket`).
    """

    scope: str
    window_start_ms: int | None
    workers: int
    tuples: int
    distinct_keys: int
    stddev_pct: float
    imbalance: float
    skew_s: float
    e_lb: float
    dist_cost: float
    throughput: float
    p50_ms: float
    p99_ms: float
    makespan_ms: float
    loads: tuple[int, ...]

    def to_dict(self) -> dict[str, Any]:
        """Plain dict (``loads`` as a list)."""
        row = asdict(self)
        row["loads"] = list(self.loads)
        return row


_TABLE = pa.schema([("scope", pa.string()), ("window_start_ms", pa.int64()),
                    ("workers", pa.int64()), ("tuples", pa.int64()),
                    ("distinct_keys", pa.int64()),
                    *((name, pa.float64()) for name in ("stddev_pct", "imbalance", "skew_s", "e_lb",
                                                        "dist_cost", "throughput", "p50_ms",
                                                        "p99_ms", "makespan_ms"))])  # fmt: skip


@dataclass(frozen=True)
class RunMetrics:
    """The cumulative row and one row per window, in window order."""

    cumulative: MetricRow
    windows: list[MetricRow] = field(default_factory=list)

    def to_table(self) -> pa.Table:
        """The rows as ``gold.distribution_metrics`` holds them: the cumulative one, then the windows.

        The cumulative row's ``window_start_ms`` is null.
        """
        rows = [self.cumulative, *self.windows]
        return pa.table({field.name: [getattr(row, field.name) for row in rows]
                         for field in _TABLE}, schema=_TABLE)  # fmt: skip


@dataclass
class _Scope:
    loads: np.ndarray
    keys: set[int] = field(default_factory=set)
    pairs: set[int] = field(default_factory=set)
    latencies: list[np.ndarray] = field(default_factory=list)
    first_arrival_ms: float = np.inf
    last_completion_ms: float = -np.inf


class RunMetricsAccumulator:
    """Collects a run's routing decisions and computes :class:`RunMetrics`."""

    def __init__(self, workers: int, window_ms: int = 60_000, process_ms: float = 1.0,
                 speed: float = 1.0) -> None:  # fmt: skip
        if workers < 1 or window_ms <= 0:
            raise ValueError("workers and window_ms must be positive")
        self.workers = workers
        self.window_ms = window_ms
        self._queue = FifoQueueModel(workers, process_ms, speed)
        self._codes: dict[int, int] = {}  # key id -> dense code, so pair ids are exact
        self._total = _Scope(np.zeros(workers, dtype=np.int64))
        self._windows: dict[int, _Scope] = {}

    def _dense_codes(self, key_ids: np.ndarray) -> np.ndarray:
        codes, uniques = pd.factorize(key_ids)
        table = np.array([self._codes.setdefault(int(k), len(self._codes)) for k in uniques],
                         dtype=np.int64)  # fmt: skip
        return table[codes] if len(uniques) else codes.astype(np.int64)

    def add(self, key_ids: np.ndarray, workers: np.ndarray, event_times_ms: np.ndarray) -> None:
        """Record a batch of routed tuples (in stream order)."""
        workers = np.asarray(workers, dtype=np.int64)
        times = np.asarray(event_times_ms, dtype=np.int64)
        if len(times) == 0:
            return
        keys = self._dense_codes(np.asarray(key_ids, dtype=np.int64))
        latencies = self._queue.add(workers, times)
        arrivals = (times - self._queue.origin_ms) / self._queue.speed
        completions = arrivals + latencies
        pairs = keys * self.workers + workers
        self._update(self._total, keys, pairs, workers, latencies, arrivals, completions)
        window_starts = times // self.window_ms * self.window_ms
        for start in np.unique(window_starts):
            mask = window_starts == start
            scope = self._windows.setdefault(int(start), _Scope(np.zeros(self.workers, np.int64)))
            self._update(scope, keys[mask], pairs[mask], workers[mask], latencies[mask],
                         arrivals[mask], completions[mask])  # fmt: skip

    def _update(self, scope: _Scope, keys: np.ndarray, pairs: np.ndarray, workers: np.ndarray,
                latencies: np.ndarray, arrivals: np.ndarray, completions: np.ndarray) -> None:  # fmt: skip
        scope.loads += np.bincount(workers, minlength=self.workers)
        scope.keys.update(pd.unique(keys).tolist())
        scope.pairs.update(pd.unique(pairs).tolist())
        scope.latencies.append(latency_bucket(latencies))
        scope.first_arrival_ms = min(scope.first_arrival_ms, float(arrivals.min()))
        scope.last_completion_ms = max(scope.last_completion_ms, float(completions.max()))

    def _row(self, scope: _Scope, name: str, start: int | None, throughput: float) -> MetricRow:
        balance = balance_metrics(scope.loads)
        latencies = np.concatenate(scope.latencies) if scope.latencies else np.zeros(0)
        p50, p99 = np.percentile(latencies, [50, 99]) if len(latencies) else (0.0, 0.0)
        makespan = scope.last_completion_ms - scope.first_arrival_ms if len(latencies) else 0.0
        return MetricRow(
            scope=name, window_start_ms=start, workers=self.workers, tuples=balance.tuples,
            distinct_keys=len(scope.keys),
            stddev_pct=balance.stddev_pct, imbalance=balance.imbalance, skew_s=balance.skew_s,
            e_lb=balance.e_lb,
            dist_cost=len(scope.pairs) / len(scope.keys) if scope.keys else 0.0,
            throughput=throughput, p50_ms=float(p50), p99_ms=float(p99),
            makespan_ms=max(0.0, makespan),
            loads=tuple(int(v) for v in scope.loads),
        )  # fmt: skip

    def result(self, processing_seconds: float) -> RunMetrics:
        """Metrics so far; ``processing_seconds`` is the time the routing took."""
        tuples = int(self._total.loads.sum())
        throughput = tuples / processing_seconds if processing_seconds > 0 else 0.0
        windows = [self._row(self._windows[s], "window", s, throughput) for s in sorted(self._windows)]
        return RunMetrics(self._row(self._total, "cumulative", None, throughput), windows)
