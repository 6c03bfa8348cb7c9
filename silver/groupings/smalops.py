"""SMALOPS: heavy-key load balancing with best-fit migration and message sets (seed 003).

Lossy counting over each counting window of event time finds the heavy keys:
at a window's end (the first tuple of a later window), keys whose count in it is
at least ``support * window_tuples`` are heavy. Only currently heavy keys are
tracked (fingerprint -> worker, rate = count in the last window, message set);
a key that is no longer heavy is dropped and routes by KEY (``home % W``) again.
A newly heavy key is placed by the power of two choices: PARTIAL_KEY's two
candidates, the one with the smaller ``R_p`` (sum of the rates of the heavy keys
on worker ``p``; heaviest new key first, ties to the first candidate).

At each decision interval boundary (after the window end if both fall on the
same tuple), best fit: ``R_avg = mean(R_p)``; workers above it are overloaded,
most loaded first; each heavy key on one, smallest rate first, goes to the
currently underloaded worker minimizing ``|R_m + R_target - R_avg|`` (lowest
index on ties), only if that narrows ``|R_source - R_target|``; ``R`` is updated
after every move and a source stops once it is no longer overloaded.

Message sets: one monotonic counter. Each placement and each move gives the key
a new id; untracked keys share ``untracked_message_set``, renewed in any window
end that drops a key. So a key's ids never decrease and grow whenever its worker
changes. Windows with no tuples (gaps in event time) are not evaluated; a
tuple older than the current window counts in the current one.

Heavy means the lossy count ``f >= support * N`` (N = the window's tuples);
lossy counting under-counts by less than ``epsilon * N``, so a key whose true
count is within that margin above the threshold may be missed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple, Self

import numpy as np
from pydantic import Field, model_validator

from silver.groupings._lossy_counting import (
    bucket_width,
    count_and_route,
    index_length,
    rebuild_index,
    table_capacity,
)
from silver.groupings.base import Grouping, GroupingParams, HotKey
from silver.groupings.hashing import KeyHashes, hash_keys
from silver.groupings.partial_key import two_candidates

__all__ = ["SmalopsGrouping", "SmalopsParams", "SmalopsState", "TrackedKey", "best_fit_moves"]

EMPTY = np.int64(-(2**63))  # fingerprint of an unused name slot
_SUPPORT = 0.01


class SmalopsParams(GroupingParams):
    """Parameters of SMALOPS (times are event-time milliseconds).

    Attributes:
        counting_window_ms: lossy counting restarts every window.
        decision_interval_ms: best-fit migration runs once per interval (seed: 10 s).
        support: heavy = at least this share of the window's tuples.
        epsilon: lossy counting's error (default ``support / 10``).
        max_window_tuples: longest window the lossy table is sized for.
    """

    counting_window_ms: int = Field(default=10_000, gt=0)
    decision_interval_ms: int = Field(default=10_000, gt=0)
    support: float = Field(default=_SUPPORT, gt=0, lt=1)
    epsilon: float = Field(default=_SUPPORT / 10, gt=0, lt=1)
    max_window_tuples: int = Field(default=10_000_000, ge=1)

    @model_validator(mode="before")
    @classmethod
    def _epsilon_follows_support(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("epsilon") is None:
            support = data.get("support", _SUPPORT)
            if isinstance(support, int | float):
                data = {**data, "epsilon": support / 10}
        return data

    @model_validator(mode="after")
    def _epsilon_below_support(self) -> Self:
        if self.epsilon > self.support:
            raise ValueError(f"epsilon ({self.epsilon}) must not exceed support ({self.support})")
        return self

    @property
    def max_heavy(self) -> int:
        """Most keys that can reach ``support`` in one window (plus float slack)."""
        return int(np.ceil(1.0 / self.support)) + 1


@dataclass
class SmalopsState:
    """Everything SMALOPS needs to resume (fixed-capacity arrays and scalars).

    ``lc_*`` is the lossy table (``lc_size`` entries used), ``at_*`` the
    assignment table of the ``tracked`` heavy keys (``at_index`` its hash index).
    ``name_fps``/``names`` hold the names of tracked keys, learnt from the first
    batch (after tracking starts) that holds the key and cut to 128 characters;
    until then :meth:`SmalopsGrouping.hot_keys` shows ``#<fingerprint hex>``.
    """

    workers: int
    started: bool
    window: int
    decision: int
    window_tuples: int
    last_window_tuples: int
    next_message_set: int
    untracked_message_set: int
    lc_size: int
    lc_fp: np.ndarray
    lc_count: np.ndarray
    lc_delta: np.ndarray
    lc_home: np.ndarray
    lc_alt: np.ndarray
    lc_index: np.ndarray
    tracked: int
    at_fp: np.ndarray
    at_worker: np.ndarray
    at_rate: np.ndarray
    at_mset: np.ndarray
    at_index: np.ndarray
    name_fps: np.ndarray
    names: np.ndarray


class TrackedKey(NamedTuple):
    """A currently heavy key and where it goes."""

    fingerprint: int
    worker: int
    rate: int
    message_set: int


def best_fit_moves(workers: int, owner: np.ndarray, rates: np.ndarray,
                   fingerprints: np.ndarray) -> list[tuple[int, int]]:  # fmt: skip
    """Seed 003's best-fit migration; ``(key index, new worker)`` in move order.

    Arithmetic is on ``W * R`` against ``sum(R)`` (``R_avg = sum / W``) so it is exact.
    """
    owner = owner.astype(np.int64)
    sizes = np.zeros(workers, dtype=np.int64)
    np.add.at(sizes, owner, rates)
    total = int(sizes.sum())
    sources = [p for p in np.argsort(-sizes, kind="stable").tolist() if workers * sizes[p] > total]
    moves: list[tuple[int, int]] = []
    for source in sources:
        mine = np.flatnonzero(owner == source)
        for k in mine[np.lexsort((fingerprints[mine], rates[mine]))].tolist():
            rate = int(rates[k])
            under = np.flatnonzero(workers * sizes < total)
            if workers * sizes[source] <= total or len(under) == 0:
                break
            target = int(under[np.argmin(np.abs(workers * (rate + sizes[under]) - total))])
            before = abs(int(sizes[source]) - int(sizes[target]))
            if abs((int(sizes[source]) - rate) - (int(sizes[target]) + rate)) < before:
                sizes[source] -= rate
                sizes[target] += rate
                owner[k] = target
                moves.append((k, target))
    return moves


class SmalopsGrouping(Grouping[SmalopsParams, SmalopsState]):
    """Heavy keys pinned and rebalanced one at a time; everything else by KEY."""

    name = "SMALOPS"
    params_type = SmalopsParams
    state_type = SmalopsState

    def initial_state(self) -> SmalopsState:
        p = self.params
        capacity, heavy = table_capacity(p.epsilon, p.max_window_tuples), p.max_heavy
        return SmalopsState(
            workers=self.workers, started=False, window=0, decision=0, window_tuples=0,
            last_window_tuples=0, next_message_set=1, untracked_message_set=0, lc_size=0,
            lc_fp=np.zeros(capacity, dtype=np.int64), lc_count=np.zeros(capacity, dtype=np.int64),
            lc_delta=np.zeros(capacity, dtype=np.int64), lc_home=np.zeros(capacity, dtype=np.uint32),
            lc_alt=np.zeros(capacity, dtype=np.uint32),
            lc_index=np.full(index_length(capacity), -1, dtype=np.int32),
            tracked=0, at_fp=np.zeros(heavy, dtype=np.int64), at_worker=np.zeros(heavy, dtype=np.int32),
            at_rate=np.zeros(heavy, dtype=np.int64), at_mset=np.zeros(heavy, dtype=np.int64),
            at_index=np.full(index_length(heavy), -1, dtype=np.int32),
            name_fps=np.full(heavy, EMPTY, dtype=np.int64), names=np.full(heavy, "", dtype="<U128"),
        )  # fmt: skip

    def route_with_message_sets(
        self, keys: Any, event_times_ms: Any
    ) -> tuple[np.ndarray, np.ndarray]:
        """Worker (int32) and message-set id (int64) of each tuple, in order."""
        times = np.ascontiguousarray(event_times_ms, dtype=np.int64)
        if len(times) == 0:
            return np.empty(0, dtype=np.int32), np.empty(0, dtype=np.int64)
        hashes = hash_keys(keys)
        if len(hashes.home) != len(times):
            raise ValueError(f"{len(hashes.home)} keys but {len(times)} event times")
        return self._route_both(hashes, times)

    def _route(self, hashes: KeyHashes, event_times_ms: np.ndarray) -> np.ndarray:
        return self._route_both(hashes, event_times_ms)[0]

    def _route_both(self, hashes: KeyHashes, times: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        s, p = self.state, self.params
        if not s.started:
            s.started = True
            s.window = int(times[0] // p.counting_window_ms)
            s.decision = int(times[0] // p.decision_interval_ms)
        out_workers = np.empty(len(times), dtype=np.int32)
        out_sets = np.empty(len(times), dtype=np.int64)
        start, width = 0, bucket_width(p.epsilon)
        while start < len(times):
            clock = np.array([p.counting_window_ms, p.decision_interval_ms, s.window, s.decision])
            start, s.window_tuples, s.lc_size = count_and_route(
                start, hashes.fingerprint, hashes.home, hashes.alt, times, clock,
                s.window_tuples, s.lc_size, width,
                s.lc_fp, s.lc_count, s.lc_delta, s.lc_home, s.lc_alt, s.lc_index,
                s.tracked, s.at_fp, s.at_worker, s.at_mset, s.at_index,
                s.untracked_message_set, self.workers, out_workers, out_sets,
            )  # fmt: skip
            if start < len(times):
                self._cross_boundaries(int(times[start]))
        self._remember_names(hashes)
        return out_workers, out_sets

    def _cross_boundaries(self, time_ms: int) -> None:
        s, p = self.state, self.params
        if time_ms // p.counting_window_ms > s.window:
            self._close_window()
            s.window = time_ms // p.counting_window_ms
        if time_ms // p.decision_interval_ms > s.decision:
            self._rebalance()
            s.decision = time_ms // p.decision_interval_ms

    def _take_message_set(self) -> int:
        s = self.state
        s.next_message_set += 1
        return s.next_message_set - 1

    def _heavy_slots(self) -> np.ndarray:
        s = self.state
        if s.window_tuples == 0:
            return np.empty(0, dtype=np.int64)
        counts = s.lc_count[: s.lc_size]
        heavy = np.flatnonzero(counts >= self.params.support * s.window_tuples)
        if len(heavy) > len(s.at_fp):  # impossible (at most 1/support); keep the heaviest
            heavy = np.sort(heavy[np.argsort(-counts[heavy], kind="stable")[: len(s.at_fp)]])
        return heavy

    def _close_window(self) -> None:
        """Keep the still-heavy keys, drop the rest, place the newly heavy ones."""
        s = self.state
        heavy = self._heavy_slots()
        fps, rates = s.lc_fp[heavy], s.lc_count[heavy]
        old = s.at_fp[: s.tracked]
        stays = np.isin(old, fps)
        if not stays.all():
            s.untracked_message_set = self._take_message_set()
        rate_of = dict(zip(fps.tolist(), rates.tolist(), strict=True))
        kept_fp = old[stays]
        kept_rate = np.array([rate_of[f] for f in kept_fp.tolist()], dtype=np.int64)
        kept_worker = s.at_worker[: s.tracked][stays]
        kept_mset = s.at_mset[: s.tracked][stays]
        new = ~np.isin(fps, old)
        new_worker, new_mset = self._place(kept_worker, kept_rate, rates[new],
                                           s.lc_home[heavy][new], s.lc_alt[heavy][new])  # fmt: skip
        s.tracked = len(kept_fp) + int(new.sum())
        s.at_fp[: s.tracked] = np.concatenate([kept_fp, fps[new]])
        s.at_rate[: s.tracked] = np.concatenate([kept_rate, rates[new]])
        s.at_worker[: s.tracked] = np.concatenate([kept_worker, new_worker])
        s.at_mset[: s.tracked] = np.concatenate([kept_mset, new_mset])
        rebuild_index(s.at_fp, s.tracked, s.at_index)
        s.last_window_tuples, s.window_tuples, s.lc_size = s.window_tuples, 0, 0
        s.lc_index[:] = -1

    def _place(self, kept_worker: np.ndarray, kept_rate: np.ndarray, rates: np.ndarray,
               homes: np.ndarray, alts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
        """Power of two choices for new heavy keys, heaviest first."""
        sizes = np.zeros(self.workers, dtype=np.int64)
        np.add.at(sizes, kept_worker, kept_rate)
        first, second = two_candidates(homes, alts, self.workers)
        workers = np.empty(len(rates), dtype=np.int32)
        sets = np.empty(len(rates), dtype=np.int64)
        for k in np.argsort(-rates, kind="stable").tolist():
            a, b = int(first[k]), int(second[k])
            chosen = b if sizes[b] < sizes[a] else a
            sizes[chosen] += rates[k]
            workers[k], sets[k] = chosen, self._take_message_set()
        return workers, sets

    def _rebalance(self) -> None:
        s = self.state
        t = s.tracked
        for k, target in best_fit_moves(self.workers, s.at_worker[:t], s.at_rate[:t], s.at_fp[:t]):
            s.at_worker[k] = target
            s.at_mset[k] = self._take_message_set()

    def _remember_names(self, hashes: KeyHashes) -> None:
        # Kept in state (not on the object) so hot_keys() survives a restore.
        s, t = self.state, self.state.tracked
        tracked = s.at_fp[:t]
        if np.array_equal(s.name_fps[:t], tracked) and (s.name_fps[t:] == EMPTY).all():
            if (s.names[:t] != "").all():
                return
        known = {fp: n for fp, n in zip(s.name_fps.tolist(), s.names.tolist(), strict=True) if n}
        missing = [fp for fp in tracked.tolist() if fp not in known]
        found = hashes.names_of(np.array(missing, dtype=np.int64)) if missing else []
        known.update({fp: n for fp, n in zip(missing, found, strict=True) if n is not None})
        s.name_fps[:] = EMPTY
        s.names[:] = ""
        s.name_fps[:t] = tracked
        s.names[:t] = [known.get(fp, "") for fp in tracked.tolist()]

    def tracked_keys(self) -> list[TrackedKey]:
        """The currently heavy keys: fingerprint, worker, rate, message set."""
        s = self.state
        return [TrackedKey(int(s.at_fp[k]), int(s.at_worker[k]), int(s.at_rate[k]), int(s.at_mset[k]))
                for k in range(s.tracked)]  # fmt: skip

    def _name(self, fingerprint: int) -> str:
        s = self.state
        for fp, name in zip(s.name_fps.tolist(), s.names.tolist(), strict=True):
            if fp == fingerprint and name:
                return str(name)
        return f"#{fingerprint & 0xFFFFFFFFFFFFFFFF:016x}"

    def hot_keys(self) -> list[HotKey]:
        """Tracked heavy keys (one worker each), by share of the last window."""
        total = max(self.state.last_window_tuples, 1)
        rows = [
            HotKey(key=self._name(k.fingerprint), pool_size=1, workers=(k.worker,),
                   estimated_share=k.rate / total,
                   reason=f"heavy: {k.rate} of {total} tuples in the last counting window")
            for k in self.tracked_keys()
        ]  # fmt: skip
        return sorted(rows, key=lambda r: -r.estimated_share)
