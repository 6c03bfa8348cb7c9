"""A run's metrics from its workers' partials, the same figures the simulator's accumulator gives.

The workers (``silver.workers``) leave per (window, worker, key) counts and per
(window, worker, latency) tuple counts; everything :class:`RunMetricsAccumulator`
computes from single tuples follows from those sums:

- loads: tuples per worker; distinct keys; distinct (key, worker) pairs;
- latency percentiles: numpy's linear interpolation over the latency histogram,
  which is the sorted latencies with their multiplicities;
- makespan: the last completion after the first arrival, from each window's
  first event time and last completion (in model ms after the window's start).

:class:`RunPartials` keeps the sums per aggregation window and remembers which
windows new partials touched, so a refresh recomputes and publishes those only:
its cost follows the new partials, not the length of the run.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from gold.metrics.balance import balance_metrics
from gold.metrics.summary import MetricRow, RunMetrics

__all__ = ["RunPartials", "weighted_percentiles"]

_COUNTS = ["count", "tuples"]


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


def _add_counts(old: pd.Series | None, new: pd.Series) -> pd.Series:
    return new if old is None else old.add(new, fill_value=0).astype("int64")


class RunPartials:
    """One run's worker partials, added up per aggregation window as they arrive.

    Args:
        workers: W.
        window_ms: the aggregation window (a multiple of the worker window).
        speed: the queue model's event-time speed-up.
    """

    def __init__(self, workers: int, window_ms: int, speed: float) -> None:
        self.workers, self.window_ms, self.speed = workers, window_ms, speed
        self._windows: dict[int, pd.DataFrame] = {}  # (worker, key) -> count, tuples
        self._latency: dict[int, pd.Series] = {}  # latency -> tuples
        self._extremes: dict[int, tuple[int, float]] = {}  # first event, last completion
        self._codes: dict[str, int] = {}  # every key of the run -> a dense code
        self._pairs: set[int] = set()  # code * W + worker
        self._loads = np.zeros(workers, dtype=np.int64)
        self._all_latency: pd.Series | None = None
        self._touched: set[int] = set()

    @property
    def tuples(self) -> int:
        """Tuples the partials cover."""
        return int(self._loads.sum())

    def _coarse(self, starts: pd.Series) -> pd.Series:
        return starts // self.window_ms * self.window_ms

    def add_windows(self, rows: pd.DataFrame) -> None:
        """Add ``silver.worker_windows`` rows of the run."""
        if rows.empty:
            return
        frame = rows[["worker", "key", *_COUNTS]].assign(start=self._coarse(rows["window_start_ms"]))
        for start, part in frame.groupby("start", sort=False):
            sums = part.groupby(["worker", "key"], sort=False)[_COUNTS].sum()
            old = self._windows.get(int(start))
            self._windows[int(start)] = sums if old is None else old.add(sums, fill_value=0).astype("int64")
            self._touched.add(int(start))
        self._loads += np.bincount(frame["worker"].to_numpy(np.int64),
                                   weights=frame["tuples"].to_numpy(np.float64),
                                   minlength=self.workers).astype(np.int64)  # fmt: skip
        pairs = frame[["key", "worker"]].drop_duplicates()
        # A dict keeps this proportional to the new partials, however many keys the run has.
        codes = np.fromiter((self._codes.setdefault(k, len(self._codes)) for k in pairs["key"]),
                            np.int64, len(pairs))  # fmt: skip
        self._pairs.update((codes * self.workers + pairs["worker"].to_numpy(np.int64)).tolist())

    def add_latency(self, rows: pd.DataFrame) -> None:
        """Add ``silver.worker_latency`` rows of the run."""
        if rows.empty:
            return
        start = self._coarse(rows["window_start_ms"])
        # A worker window's last completion, re-based on its aggregation window's start.
        completion = rows["last_completion_ms"] + (rows["window_start_ms"] - start) / self.speed
        frame = pd.DataFrame({"start": start, "latency_ms": rows["latency_ms"],
                              "tuples": rows["tuples"], "first": rows["first_event_ms"],
                              "completion": completion})  # fmt: skip
        for window, part in frame.groupby("start", sort=False):
            histogram = part.groupby("latency_ms")["tuples"].sum()
            self._latency[int(window)] = _add_counts(self._latency.get(int(window)), histogram)
            first, last = int(part["first"].min()), float(part["completion"].max())
            if int(window) in self._extremes:
                seen_first, seen_last = self._extremes[int(window)]
                first, last = min(first, seen_first), max(last, seen_last)
            self._extremes[int(window)] = (first, last)
            self._touched.add(int(window))
        self._all_latency = _add_counts(self._all_latency,
                                        frame.groupby("latency_ms")["tuples"].sum())  # fmt: skip

    def take_touched(self) -> list[int]:
        """The windows new partials reached since the last call, in order; forgets them."""
        touched, self._touched = sorted(self._touched), set()
        return touched

    def window_rows(self, starts: list[int]) -> pd.DataFrame:
        """The summed partials of windows ``starts`` (window_start_ms, worker, key, count, tuples)."""
        frames = [self._windows[s].reset_index().assign(window_start_ms=s)
                  for s in starts if s in self._windows]  # fmt: skip
        if not frames:
            return pd.DataFrame(columns=["window_start_ms", "worker", "key", *_COUNTS])
        return pd.concat(frames, ignore_index=True)

    def _row(self, name: str, start: int | None, loads: np.ndarray, keys: int, pairs: int,
             latency: pd.Series | None, makespan: float, throughput: float) -> MetricRow:  # fmt: skip
        balance = balance_metrics(loads)
        histogram = latency if latency is not None else pd.Series(dtype="int64")
        p50, p99 = weighted_percentiles(histogram.index.to_numpy(np.float64),
                                        histogram.to_numpy(np.int64), (50, 99))  # fmt: skip
        return MetricRow(
            scope=name, window_start_ms=start, workers=self.workers, tuples=balance.tuples,
            distinct_keys=keys, stddev_pct=balance.stddev_pct, imbalance=balance.imbalance,
            skew_s=balance.skew_s, e_lb=balance.e_lb, dist_cost=pairs / keys if keys else 0.0,
            throughput=throughput, p50_ms=p50, p99_ms=p99, makespan_ms=max(0.0, makespan),
            loads=tuple(int(v) for v in loads),
        )  # fmt: skip

    def _window_row(self, start: int, throughput: float) -> MetricRow:
        sums = self._windows[start]
        workers = sums.index.get_level_values("worker").to_numpy(np.int64)
        loads = np.bincount(workers, weights=sums["tuples"].to_numpy(np.float64),
                            minlength=self.workers).astype(np.int64)  # fmt: skip
        keys = sums.index.get_level_values("key").nunique()
        makespan = 0.0
        if start in self._extremes:
            first, last = self._extremes[start]
            makespan = last - (first - start) / self.speed
        return self._row("window", start, loads, keys, len(sums), self._latency.get(start),
                         makespan, throughput)  # fmt: skip

    def result(self, processing_seconds: float, starts: list[int] | None = None) -> RunMetrics:
        """The run's metrics so far: cumulative, then one row per window of ``starts`` (None: all)."""
        throughput = self.tuples / processing_seconds if processing_seconds > 0 else 0.0
        wanted = sorted(self._windows) if starts is None else [s for s in starts if s in self._windows]
        rows = [self._window_row(start, throughput) for start in wanted]
        makespan = 0.0
        if self._extremes:
            first = min(f for f, _ in self._extremes.values())
            makespan = max((start - first) / self.speed + last
                           for start, (_, last) in self._extremes.items())  # fmt: skip
        cumulative = self._row("cumulative", None, self._loads, len(self._codes), len(self._pairs),
                               self._all_latency, makespan, throughput)  # fmt: skip
        return RunMetrics(cumulative, rows)
