"""A run's metrics from its workers' partials, the same figures the simulator's accumulator gives.

The workers (``silver.workers``) leave per (window, worker, key) counts and per
(window, worker, latency) tuple counts; everything :class:`RunMetricsAccumulator`
computes from single tuples follows from those sums:

- loads: tuples per worker; distinct keys; distinct (key, worker) pairs; the
  loads KEY would give the same tuples (each key's tuples on murmur3(key) mod W);
- latency percentiles: numpy's linear interpolation over the latency histogram,
  which is the sorted latencies with their multiplicities;
- makespan: the last completion after the first arrival, from each window's
  first event time and last completion (in model ms after the window's start).

:class:`RunPartials` keeps the sums per aggregation window and remembers which
windows new partials touched, so a refresh recomputes and publishes those only:
its cost follows the new partials, not the length of the run. Once published,
all but the newest windows are released (their memory too); a late partial makes
a released window stale, and its sums are restored from silver before it is
published again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeAlias

import numpy as np
import pandas as pd
import pyarrow as pa

from core.windows import window_end, window_start
from gold.metrics.summary import MetricRow, RunMetrics, metric_row
from gold.schemas import CUMULATIVE_WINDOW_START_MS
from silver.groupings.hashing import hash_keys

__all__ = ["Rows", "RunPartials"]

Rows: TypeAlias = "pa.Table | pd.DataFrame"
"""Rows of a silver table, as Arrow (read from its files) or pandas."""

_KEY_COUNTS = pa.schema([("window_start_ms", pa.int64()), ("window_end_ms", pa.int64()),
                         ("key", pa.string()), ("count", pa.int64()), ("tuples", pa.int64()),
                         ("workers", pa.int64())])  # fmt: skip
_WORKER_LOAD = pa.schema([("window_start_ms", pa.int64()), ("worker", pa.int32()),
                          ("tuples", pa.int64()), ("keys", pa.int64())])  # fmt: skip


def _table(windows: list[dict[str, Any]], schema: pa.Schema) -> pa.Table:
    """One table of every window's columns (``schema``'s, in its order)."""
    columns = {name: np.concatenate([w[name] for w in windows]) if windows else []
               for name in schema.names}  # fmt: skip
    return pa.table(columns, schema=schema)


_Histogram = tuple[np.ndarray, np.ndarray]  # distinct latencies (sorted) and their tuples


def _histogram(latency: np.ndarray, tuples: np.ndarray,
               old: _Histogram | None = None) -> _Histogram:  # fmt: skip
    """Tuples per distinct latency, added to ``old``'s."""
    if old is not None:
        latency, tuples = np.concatenate([old[0], latency]), np.concatenate([old[1], tuples])
    every, inverse = np.unique(latency, return_inverse=True)
    summed = np.zeros(len(every), np.int64)
    np.add.at(summed, inverse, tuples)
    return every, summed


def _numbers(rows: Rows, column: str, kind: type) -> np.ndarray:
    return np.asarray(rows[column], dtype=kind)


@dataclass(frozen=True)
class _WindowSums:
    """One aggregation window's partials: per (key, worker) pair, its count and tuples.

    ``pairs`` are sorted and distinct, each ``key_code * W + worker``.
    """

    pairs: np.ndarray
    count: np.ndarray
    tuples: np.ndarray

    def add(self, pairs: np.ndarray, count: np.ndarray, tuples: np.ndarray) -> _WindowSums:
        # Sorting only the new pairs and merging them in: the window filling now holds
        # far more pairs than a refresh brings, and sorting them all again cost the most.
        new, inverse = np.unique(pairs, return_inverse=True)

        def summed(values: np.ndarray) -> np.ndarray:
            # Integer sums: bincount's float weights would round beyond 2**53.
            out = np.zeros(len(new), np.int64)
            np.add.at(out, inverse, values)
            return out

        new_count, new_tuples = summed(count), summed(tuples)
        at = np.searchsorted(self.pairs, new)
        held = at < len(self.pairs)
        held[held] = self.pairs[at[held]] == new[held]
        old_count, old_tuples = self.count.copy(), self.tuples.copy()
        old_count[at[held]] += new_count[held]  # distinct positions: the new pairs are
        old_tuples[at[held]] += new_tuples[held]
        fresh = ~held
        return _WindowSums(np.insert(self.pairs, at[fresh], new[fresh]),
                           np.insert(old_count, at[fresh], new_count[fresh]),
                           np.insert(old_tuples, at[fresh], new_tuples[fresh]))  # fmt: skip


_NO_SUMS = _WindowSums(np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, np.int64))


class RunPartials:
    """One run's worker partials, added up per aggregation window as they arrive.

    Args:
        workers: W.
        window_ms: the aggregation window (a multiple of the worker window).
        speed: the queue model's event-time speed-up.
        process_ms: the queue model's service time per tuple.
    """

    def __init__(self, workers: int, window_ms: int, speed: float, process_ms: float) -> None:
        self.workers, self.window_ms, self.speed = workers, window_ms, speed
        self.process_ms = process_ms
        self._windows: dict[int, _WindowSums] = {}
        self._latency: dict[int, _Histogram] = {}
        self._extremes: dict[int, tuple[int, float]] = {}  # first event, last completion
        self._codes: dict[str, int] = {}  # every key of the run -> a dense code
        self._keys: list[str] = []  # code -> key
        self._homes = np.empty(0, np.int64)  # code -> KEY's worker for the key
        self._pairs: set[int] = set()  # code * W + worker
        self._loads = np.zeros(workers, dtype=np.int64)
        self._key_loads = np.zeros(workers, dtype=np.int64)
        self._all_latency: _Histogram | None = None
        self._touched: set[int] = set()
        # Windows before ``_held_from`` were published and released (see ``release``);
        # partials that reach one make it stale until its sums are restored.
        self._held_from: int | None = None
        self._restored: set[int] = set()
        self._stale: set[int] = set()

    @property
    def tuples(self) -> int:
        """Tuples the partials cover."""
        return int(self._loads.sum())

    def _coarse(self, starts: np.ndarray) -> np.ndarray:
        return window_start(starts, self.window_ms)

    def _key_codes(self, keys: np.ndarray) -> np.ndarray:
        # Only the batch's distinct keys go through the dict: its cost follows the new
        # partials, however many keys the run has.
        inverse, distinct = pd.factorize(keys)
        known = self._codes.get
        codes = np.array([known(key, -1) for key in distinct], np.int64)
        new = np.flatnonzero(codes < 0)
        for i in new.tolist():  # keys new to the run
            codes[i] = self._codes[distinct[i]] = len(self._keys)
            self._keys.append(distinct[i])
        if len(new):
            homes = hash_keys(np.asarray(distinct[new], dtype=object)).home % np.uint32(self.workers)
            self._homes = np.concatenate([self._homes, homes.astype(np.int64)])
        return codes[inverse]

    def _held(self, start: int) -> bool:
        return self._held_from is None or start >= self._held_from or start in self._restored

    def _window_columns(self, rows: Rows) -> tuple[np.ndarray, ...]:
        workers = _numbers(rows, "worker", np.int64)
        pairs = self._key_codes(_numbers(rows, "key", object)) * self.workers + workers
        return workers, pairs, _numbers(rows, "count", np.int64), _numbers(rows, "tuples", np.int64)

    def add_windows(self, rows: Rows) -> None:
        """Add ``silver.worker_windows`` rows of the run."""
        if len(rows) == 0:
            return
        workers, pairs, count, tuples = self._window_columns(rows)
        starts = self._coarse(_numbers(rows, "window_start_ms", np.int64))
        for start in np.unique(starts).tolist():
            self._touched.add(start)
            if not self._held(start):
                self._stale.add(start)
                continue
            mine = starts == start
            sums = self._windows.get(start, _NO_SUMS)
            self._windows[start] = sums.add(pairs[mine], count[mine], tuples[mine])
        np.add.at(self._loads, workers, tuples)
        np.add.at(self._key_loads, self._homes[pairs // self.workers], tuples)
        self._pairs.update(np.unique(pairs).tolist())

    def add_latency(self, rows: Rows) -> None:
        """Add ``silver.worker_latency`` rows of the run."""
        if len(rows) == 0:
            return
        fine = _numbers(rows, "window_start_ms", np.int64)
        starts = self._coarse(fine)
        latency = _numbers(rows, "latency_ms", np.float64)
        tuples = _numbers(rows, "tuples", np.int64)
        first = _numbers(rows, "first_event_ms", np.int64)
        # A worker window's last completion, re-based on its aggregation window's start.
        completion = _numbers(rows, "last_completion_ms", np.float64) + (fine - starts) / self.speed
        for window in np.unique(starts).tolist():
            mine = starts == window
            if self._held(window):
                self._latency[window] = _histogram(latency[mine], tuples[mine],
                                                   self._latency.get(window))  # fmt: skip
            else:
                self._stale.add(window)
            earliest, last = int(first[mine].min()), float(completion[mine].max())
            if window in self._extremes:
                seen_first, seen_last = self._extremes[window]
                earliest, last = min(earliest, seen_first), max(last, seen_last)
            self._extremes[window] = (earliest, last)
            self._touched.add(window)
        self._all_latency = _histogram(latency, tuples, self._all_latency)

    def release(self, keep: int) -> None:
        """Forget the sums of all but the ``keep`` newest windows; call once they are published.

        A long run's windows would otherwise all stay in memory. The run's totals
        (loads, distinct keys and pairs, latencies, makespan) stay exact; partials
        that later reach a released window make it stale (:meth:`take_stale`), and
        its sums must be restored (:meth:`restore`) before it is published again.
        """
        starts = sorted(self._windows.keys() | self._latency.keys())
        if len(starts) <= keep:
            return
        self._held_from = starts[-keep] if keep else starts[-1] + 1
        for start in starts:
            if start < self._held_from:
                self._windows.pop(start, None)
                self._latency.pop(start, None)
        self._restored.clear()

    def take_stale(self) -> list[int]:
        """The released windows new partials reached since the last call, in order; forgets them."""
        stale, self._stale = sorted(self._stale), set()
        return stale

    def restore(self, start: int, windows: Rows, latency: Rows) -> None:
        """Set a released window's sums from every one of its partials (the run's totals have them).

        Args:
            start: the window.
            windows: all of the window's ``silver.worker_windows`` rows added so far.
            latency: all of its ``silver.worker_latency`` rows added so far.
        """
        self._restored.add(start)
        self._windows.pop(start, None)
        self._latency.pop(start, None)
        if len(windows):
            _, pairs, count, tuples = self._window_columns(windows)
            self._windows[start] = _NO_SUMS.add(pairs, count, tuples)
        if len(latency):
            self._latency[start] = _histogram(_numbers(latency, "latency_ms", np.float64),
                                              _numbers(latency, "tuples", np.int64))  # fmt: skip

    def take_touched(self) -> list[int]:
        """The windows new partials reached since the last call, in order; forgets them."""
        touched, self._touched = sorted(self._touched), set()
        return touched

    def _with_sums(self, starts: list[int]) -> list[int]:
        # A window can be touched by latency partials read before its count partials
        # (each table is read at its own latest version): it has no sums yet.
        return [start for start in starts if start in self._windows]

    def key_counts(self, starts: list[int]) -> pa.Table:
        """Per window of ``starts`` and key: the merged count, its tuples and the workers holding it.

        The AggregatorBolt: the workers' partials of a key added up.
        """
        windows = []
        for start in self._with_sums(starts):
            sums = self._windows[start]
            codes, first = np.unique(sums.pairs // self.workers, return_index=True)
            ends = np.append(first[1:], len(sums.pairs))  # pairs are sorted by key code
            windows.append({
                "window_start_ms": np.full(len(codes), start),
                "window_end_ms": np.full(len(codes), window_end(start, self.window_ms)),
                "key": np.array([self._keys[code] for code in codes.tolist()], dtype=object),
                "count": np.add.reduceat(sums.count, first) if len(codes) else first,
                "tuples": np.add.reduceat(sums.tuples, first) if len(codes) else first,
                "workers": ends - first,
            })  # fmt: skip
        return _table(windows, _KEY_COUNTS)

    def worker_load(self, starts: list[int]) -> pa.Table:
        """Per window of ``starts`` and worker (all W; idle ones with 0): tuples and distinct keys."""
        windows = []
        for start in self._with_sums(starts):
            sums = self._windows[start]
            workers = sums.pairs % self.workers
            tuples = np.zeros(self.workers, np.int64)
            np.add.at(tuples, workers, sums.tuples)
            windows.append({
                "window_start_ms": np.full(self.workers, start), "worker": np.arange(self.workers),
                "tuples": tuples,
                "keys": np.bincount(workers, minlength=self.workers),  # a pair per key and worker
            })  # fmt: skip
        return _table(windows, _WORKER_LOAD)

    def _loads_of(self, workers: np.ndarray, tuples: np.ndarray) -> np.ndarray:
        loads = np.zeros(self.workers, np.int64)
        np.add.at(loads, workers, tuples)
        return loads

    def _window_row(self, start: int, throughput: float) -> MetricRow:
        sums = self._windows[start]
        codes = sums.pairs // self.workers
        loads = self._loads_of(sums.pairs % self.workers, sums.tuples)
        key_loads = self._loads_of(self._homes[codes], sums.tuples)
        keys = len(np.unique(codes))
        makespan = 0.0
        if start in self._extremes:
            first, last = self._extremes[start]
            makespan = last - (first - start) / self.speed
        return metric_row("window", start, loads, key_loads, keys, len(sums.pairs),
                          self._latency.get(start), makespan, throughput, self.process_ms)  # fmt: skip

    def result(self, processing_seconds: float, starts: list[int] | None = None) -> RunMetrics:
        """The run's metrics so far: cumulative, then one row per window of ``starts`` (None: all held)."""
        throughput = self.tuples / processing_seconds if processing_seconds > 0 else 0.0
        wanted = sorted(self._windows) if starts is None else self._with_sums(starts)
        rows = [self._window_row(start, throughput) for start in wanted]
        makespan = 0.0
        if self._extremes:
            first = min(f for f, _ in self._extremes.values())
            makespan = max((start - first) / self.speed + last
                           for start, (_, last) in self._extremes.items())  # fmt: skip
        cumulative = metric_row("cumulative", CUMULATIVE_WINDOW_START_MS, self._loads,
                                self._key_loads, len(self._codes), len(self._pairs),
                                self._all_latency, makespan, throughput, self.process_ms)  # fmt: skip
        return RunMetrics(cumulative, rows)
