"""SMALOPS (seed 003): lossy counting per window, power-of-two placement, best-fit moves.

Per counting window of event time, lossy counting (Manku & Motwani, buckets of
``ceil(1 / epsilon)`` tuples) counts the keys; when a tuple of a later window
arrives, keys counted at least ``support * N`` times (``N`` the window's tuples)
are heavy and every other key is dropped. A newly heavy key goes to the one of
PKG's two candidates with the smaller ``R_p`` (the summed rates, counts in the
last window, of the heavy keys on ``p``). At each decision interval, best fit:
each heavy key on an overloaded worker (``R_p > R_avg``), smallest first, moves
to the underloaded worker minimizing ``|R_m + R_target - R_avg|``. Keys that are
not heavy go to ``murmur3(key) mod W``. Each placement or move starts a new
message set; keys not heavy share one, renewed when a window end drops a key.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from tests.reference_routings._hashes import candidates, fingerprint, home, overrides

__all__ = ["DEFAULTS", "route", "route_with_message_sets"]

DEFAULTS = {"counting_window_ms": 10_000, "decision_interval_ms": 10_000, "support": 0.01,
            "epsilon": None, "max_window_tuples": 10_000_000}  # fmt: skip


class _Smalops:
    def __init__(self, workers: int, p: dict) -> None:
        self.workers, self.support = workers, p["support"]
        self.width = math.ceil(1 / p["epsilon"])
        self.seen = 0  # N: tuples in the current window
        # key -> [count, delta], in order of entry. Unbounded: max_window_tuples only sizes the
        # kernel's table, and no window here fills it.
        self.lossy: dict[str, list[int]] = {}
        self.heavy: dict[str, list[int]] = {}  # key -> [worker, rate, message set]
        self.next_set = 1
        self.untracked_set = 0

    def _new_set(self) -> int:
        self.next_set += 1
        return self.next_set - 1

    def count(self, key: str) -> None:
        self.seen += 1
        bucket = -(-self.seen // self.width)  # the current bucket, ceil(N / w)
        if key in self.lossy:
            self.lossy[key][0] += 1
        else:
            self.lossy[key] = [1, bucket - 1]
        if self.seen % self.width == 0:
            self.lossy = {k: e for k, e in self.lossy.items() if e[0] + e[1] > bucket}

    def close_window(self) -> None:
        heavy = {k: c for k, (c, _) in self.lossy.items() if c >= self.support * self.seen}
        if any(k not in heavy for k in self.heavy):
            self.untracked_set = self._new_set()
        self.heavy = {k: [w, heavy[k], s] for k, (w, _, s) in self.heavy.items() if k in heavy}
        sizes = [0] * self.workers
        for worker, rate, _ in self.heavy.values():
            sizes[worker] += rate
        new = [k for k in heavy if k not in self.heavy]
        # Heaviest first; equal counts in the order the keys entered the lossy table (the kernel's).
        for key in sorted(new, key=lambda k: -heavy[k]):
            first, second = candidates(key, self.workers)
            chosen = second if sizes[second] < sizes[first] else first  # ties: first (documented)
            sizes[chosen] += heavy[key]
            self.heavy[key] = [chosen, heavy[key], self._new_set()]
        self.seen, self.lossy = 0, {}

    def best_fit(self) -> None:
        sizes = [0] * self.workers
        for worker, rate, _ in self.heavy.values():
            sizes[worker] += rate
        # R_avg = total / W, kept exact by comparing W * R with the total (best_fit_moves does too).
        total, workers = sum(sizes), self.workers
        # Overloaded workers, most loaded first; equal loads: lower index (the kernel's sort).
        sources = sorted(
            (w for w in range(workers) if workers * sizes[w] > total), key=lambda w: -sizes[w]
        )
        for source in sources:
            # Smallest rate first; equal rates by signed 64-bit fingerprint (the kernel's choice).
            mine = sorted((k for k, e in self.heavy.items() if e[0] == source),
                          key=lambda k: (self.heavy[k][1], fingerprint(k)))  # fmt: skip
            for key in mine:
                rate = self.heavy[key][1]
                under = [w for w in range(workers) if workers * sizes[w] < total]
                if workers * sizes[source] <= total or not under:
                    break
                # The target minimizing |R_m + R_target - R_avg|; ties: lowest index (documented).
                target = min(under, key=lambda w: abs(workers * (rate + sizes[w]) - total))
                # Only the best-fit target is tried, and only a move that narrows the gap is made
                # (the project's reading of seed 003's "increase in the load distance").
                gap_after = abs((sizes[source] - rate) - (sizes[target] + rate))
                if gap_after < abs(sizes[source] - sizes[target]):
                    sizes[source] -= rate
                    sizes[target] += rate
                    self.heavy[key][0] = target
                    self.heavy[key][2] = self._new_set()

    def send(self, key: str) -> tuple[int, int]:
        if key in self.heavy:
            return self.heavy[key][0], self.heavy[key][2]
        return home(key) % self.workers, self.untracked_set


def route_with_message_sets(workers: int, keys: Iterable[str], times_ms: Iterable[int],
                            params: dict | None = None) -> tuple[list[int], list[int]]:  # fmt: skip
    """Worker and message-set id of each tuple."""
    p = overrides(DEFAULTS, params)
    if p["epsilon"] is None:
        p["epsilon"] = p["support"] / 10
    state = _Smalops(workers, p)
    window_ms, decision_ms = p["counting_window_ms"], p["decision_interval_ms"]
    window = decision = None
    out, sets = [], []
    for key, time_ms in zip(keys, times_ms, strict=True):
        t = int(time_ms)
        if window is None:
            window, decision = t // window_ms, t // decision_ms
        # One evaluation per crossing: windows without tuples are skipped; on the same tuple the
        # window ends before the decision runs; late tuples count in the current window.
        if t // window_ms > window:
            state.close_window()
            window = t // window_ms
        if t // decision_ms > decision:
            state.best_fit()
            decision = t // decision_ms
        state.count(key)
        worker, message_set = state.send(key)
        out.append(worker)
        sets.append(message_set)
    return out, sets


def route(workers: int, keys: Iterable[str], times_ms: Iterable[int],
          params: dict | None = None) -> list[int]:  # fmt: skip
    return route_with_message_sets(workers, keys, times_ms, params)[0]
