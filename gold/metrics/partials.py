"""A run's metrics from its workers' partials, the same figures the simulator's accumulator gives.

The workers (``silver.workers``) leave per (window, worker, key) counts and per
(window, worker, latency) tuple counts; everything :class:`RunMetricsAccumulator`
computes from single tuples follows from those sums:

- loads: tuples per worker; distinct keys; distinct (key, worker) pairs;
- latency percentiles: numpy's linear interpolation over the latency histogram,
  which is the sorted latencies with their multiplicities;
- makespan: the last completion after the first arrival, from each window's
  first event time and last completion (in model ms after the window's start).

Frames here are one run's partials with ``window_start_ms`` already on the
aggregation window (:class:`RunPartials` keeps them so).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from gold.metrics.balance import balance_metrics
from gold.metrics.summary import MetricRow, RunMetrics

__all__ = ["RunPartials", "weighted_percentiles"]

_WINDOW_KEYS = ["window_start_ms", "worker", "key"]
_LATENCY_KEYS = ["window_start_ms", "latency_ms"]


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


def _sum_by(frame: pd.DataFrame, keys: list[str], sums: dict[str, str]) -> pd.DataFrame:
    return frame.groupby(keys, sort=False).agg(**{c: (c, how) for c, how in sums.items()}).reset_index()


class RunPartials:
    """One run's worker partials, added up per aggregation window as they arrive.

    Args:
        workers: W.
        window_ms: the aggregation window (a multiple of the worker window).
        speed: the queue model's event-time speed-up.
    """

    def __init__(self, workers: int, window_ms: int, speed: float) -> None:
        self.workers, self.window_ms, self.speed = workers, window_ms, speed
        self.windows = pd.DataFrame({c: pd.Series(dtype=t) for c, t in (
            ("window_start_ms", "int64"), ("worker", "int64"), ("key", "object"),
            ("count", "int64"), ("tuples", "int64"))})  # fmt: skip
        self._latency = pd.DataFrame({c: pd.Series(dtype=t) for c, t in (
            ("window_start_ms", "int64"), ("latency_ms", "float64"), ("tuples", "int64"))})  # fmt: skip
        self._extremes = pd.DataFrame({c: pd.Series(dtype=t) for c, t in (
            ("window_start_ms", "int64"), ("first_event_ms", "int64"),
            ("last_completion_ms", "float64"))})  # fmt: skip

    def _coarse(self, starts: pd.Series) -> pd.Series:
        return starts // self.window_ms * self.window_ms

    def add_windows(self, rows: pd.DataFrame) -> None:
        """Add ``silver.worker_windows`` rows of the run."""
        if rows.empty:
            return
        frame = rows[[*_WINDOW_KEYS, "count", "tuples"]].assign(
            window_start_ms=self._coarse(rows["window_start_ms"]))
        merged = pd.concat([self.windows, frame], ignore_index=True)
        self.windows = _sum_by(merged, _WINDOW_KEYS, {"count": "sum", "tuples": "sum"})

    def add_latency(self, rows: pd.DataFrame) -> None:
        """Add ``silver.worker_latency`` rows of the run."""
        if rows.empty:
            return
        start = self._coarse(rows["window_start_ms"])
        histogram = rows[["latency_ms", "tuples"]].assign(window_start_ms=start)
        self._latency = _sum_by(pd.concat([self._latency, histogram], ignore_index=True),
                                _LATENCY_KEYS, {"tuples": "sum"})  # fmt: skip
        # A worker window's last completion, re-based on its aggregation window's start.
        completion = rows["last_completion_ms"] + (rows["window_start_ms"] - start) / self.speed
        extremes = pd.DataFrame({"window_start_ms": start, "first_event_ms": rows["first_event_ms"],
                                 "last_completion_ms": completion})  # fmt: skip
        self._extremes = _sum_by(pd.concat([self._extremes, extremes], ignore_index=True),
                                 ["window_start_ms"],
                                 {"first_event_ms": "min", "last_completion_ms": "max"})  # fmt: skip

    def _row(self, name: str, start: int | None, windows: pd.DataFrame, latency: pd.DataFrame,
             makespan: float, throughput: float) -> MetricRow:  # fmt: skip
        loads = np.bincount(windows["worker"].to_numpy(np.int64),
                            weights=windows["tuples"].to_numpy(np.float64),
                            minlength=self.workers).astype(np.int64)  # fmt: skip
        balance = balance_metrics(loads)
        keys = windows["key"].nunique()
        pairs = len(windows[["key", "worker"]].drop_duplicates())
        p50, p99 = weighted_percentiles(latency["latency_ms"].to_numpy(np.float64),
                                        latency["tuples"].to_numpy(np.int64), (50, 99))  # fmt: skip
        return MetricRow(
            scope=name, window_start_ms=start, workers=self.workers, tuples=balance.tuples,
            distinct_keys=keys, stddev_pct=balance.stddev_pct, imbalance=balance.imbalance,
            skew_s=balance.skew_s, e_lb=balance.e_lb, dist_cost=pairs / keys if keys else 0.0,
            throughput=throughput, p50_ms=p50, p99_ms=p99, makespan_ms=max(0.0, makespan),
            loads=tuple(int(v) for v in loads),
        )  # fmt: skip

    def result(self, processing_seconds: float) -> RunMetrics:
        """The run's metrics so far: cumulative, then one row per aggregation window."""
        tuples = int(self.windows["tuples"].sum())
        throughput = tuples / processing_seconds if processing_seconds > 0 else 0.0
        extremes = self._extremes.set_index("window_start_ms")
        latency = dict(tuple(self._latency.groupby("window_start_ms")))
        no_latency = self._latency.iloc[0:0]
        rows = []
        for start, windows in self.windows.groupby("window_start_ms", sort=True):
            window = extremes.loc[start] if start in extremes.index else None
            makespan = (0.0 if window is None else window["last_completion_ms"]
                        - (window["first_event_ms"] - start) / self.speed)  # fmt: skip
            rows.append(self._row("window", int(start), windows, latency.get(start, no_latency),
                                  makespan, throughput))  # fmt: skip
        first = extremes["first_event_ms"].min() if len(extremes) else 0
        last = ((extremes.index.to_numpy() - first) / self.speed
                + extremes["last_completion_ms"].to_numpy()).max() if len(extremes) else 0.0  # fmt: skip
        cumulative = self._row("cumulative", None, self.windows, self._latency, float(last),
                               throughput)  # fmt: skip
        return RunMetrics(cumulative, rows)
