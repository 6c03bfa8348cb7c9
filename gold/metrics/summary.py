"""A scope's metrics (one window, or the whole run) and the run's set of them.

One definition of every figure: :func:`metric_row` turns a scope's sums (loads,
distinct keys and pairs, the latency histogram) into a :class:`MetricRow`, for
the pipeline's gold refresh and for the simulator alike (both add their tuples
up as worker partials, :class:`gold.metrics.partials.RunPartials`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa

from gold.metrics.balance import balance_metrics
from silver.queueing import capacity_per_s

__all__ = ["MetricRow", "RunMetrics", "metric_row", "weighted_percentiles"]


@dataclass(frozen=True)
class MetricRow:
    """The metrics of one scope: ``cumulative`` (the whole run) or one ``window``.

    ``throughput`` is routed tuples per second of processing for the whole run;
    a window repeats the run's value (processing time is not split by window).
    Latency percentiles are linear-interpolated (numpy's default) over latencies kept to
    three significant digits (:func:`silver.queueing.latency_bucket`). ``capacity`` is
    the highest arrival rate (tuples per second) at which the scope's busiest worker
    keeps up (:func:`silver.queueing.capacity_per_s`); ``capacity_vs_key`` is it
    divided by KEY's on the same tuples (murmur3(key) mod W).
    """

    scope: str
    window_start_ms: int
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
    capacity: float
    capacity_vs_key: float
    loads: tuple[int, ...]

    def to_dict(self) -> dict[str, Any]:
        """Plain dict (``loads`` as a list)."""
        row = asdict(self)
        row["loads"] = list(self.loads)
        return row


_FLOATS = ("stddev_pct", "imbalance", "skew_s", "e_lb", "dist_cost", "throughput", "p50_ms",
           "p99_ms", "makespan_ms", "capacity", "capacity_vs_key")  # fmt: skip
_TABLE = pa.schema([("scope", pa.string()), ("window_start_ms", pa.int64()),
                    ("workers", pa.int64()), ("tuples", pa.int64()),
                    ("distinct_keys", pa.int64()),
                    *((name, pa.float64()) for name in _FLOATS)])  # fmt: skip


@dataclass(frozen=True)
class RunMetrics:
    """The cumulative row and one row per window, in window order."""

    cumulative: MetricRow
    windows: list[MetricRow] = field(default_factory=list)

    def to_table(self) -> pa.Table:
        """The rows as ``gold.distribution_metrics`` holds them: the cumulative one, then the windows.

        The cumulative row's ``window_start_ms`` is :data:`gold.schemas.CUMULATIVE_WINDOW_START_MS`.
        """
        rows = [self.cumulative, *self.windows]
        return pa.table({field.name: [getattr(row, field.name) for row in rows]
                         for field in _TABLE}, schema=_TABLE)  # fmt: skip


def weighted_percentiles(values: np.ndarray, counts: np.ndarray,
                         percents: tuple[float, ...]) -> list[float]:  # fmt: skip
    """``np.percentile(np.repeat(values, counts), percents)`` without repeating anything."""
    order = np.argsort(values, kind="stable")
    sorted_values, cumulative = values[order], np.cumsum(counts[order])
    if len(cumulative) == 0 or cumulative[-1] == 0:
        return [0.0 for _ in percents]
    out = []
    for percent in percents:
        rank = percent / 100 * (cumulative[-1] - 1)
        low, high = np.floor(rank), np.ceil(rank)
        below = sorted_values[np.searchsorted(cumulative, low, side="right")]
        above = sorted_values[np.searchsorted(cumulative, high, side="right")]
        out.append(float(below + (above - below) * (rank - low)))
    return out


def metric_row(scope: str, start: int, loads: np.ndarray, key_loads: np.ndarray,
               keys: int, pairs: int, latency: tuple[np.ndarray, np.ndarray] | None,
               makespan_ms: float, throughput: float, process_ms: float) -> MetricRow:  # fmt: skip
    """A scope's row from its sums.

    Args:
        scope: ``cumulative`` or ``window``.
        start: the window's start; :data:`gold.schemas.CUMULATIVE_WINDOW_START_MS` for
            the cumulative row.
        loads: tuples per worker (all W).
        key_loads: tuples per worker had KEY routed the same tuples.
        keys: distinct keys.
        pairs: distinct (key, worker) pairs.
        latency: distinct latencies and their tuples; None: no latency seen.
        makespan_ms: last completion after the first arrival.
        throughput: routed tuples per second of processing.
        process_ms: the queue model's service time.
    """
    balance = balance_metrics(loads)
    values, counts = latency if latency is not None else (np.empty(0), np.empty(0, np.int64))
    p50, p99 = weighted_percentiles(values, counts, (50, 99))
    capacity = capacity_per_s(loads, process_ms)
    key_capacity = capacity_per_s(key_loads, process_ms)
    return MetricRow(
        scope=scope, window_start_ms=start, workers=len(loads), tuples=balance.tuples,
        distinct_keys=keys, stddev_pct=balance.stddev_pct, imbalance=balance.imbalance,
        skew_s=balance.skew_s, e_lb=balance.e_lb, dist_cost=pairs / keys if keys else 0.0,
        throughput=throughput, p50_ms=p50, p99_ms=p99, makespan_ms=max(0.0, makespan_ms),
        capacity=capacity, capacity_vs_key=capacity / key_capacity if key_capacity else 0.0,
        loads=tuple(int(v) for v in loads),
    )  # fmt: skip
