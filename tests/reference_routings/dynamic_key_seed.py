"""DYNAMIC_KEY's seed mode: seed 000's rule as its text reads (docs/groupings.md), per tuple.

Keys live in generational spaces of ``distinct_key_count`` entries (baby /
teenage / old, ``space_fractions`` of it); a new key enters the baby space,
replacing its least frequent key when full. Every key-space cycle the most
frequent babies move up to the teenage space, and every ``teen_to_old_every``-th
cycle the most frequent teenagers move up to the old space, a full space sending
its least frequent member down; teenage and old keys unseen for ``gc_after_ms``
are evicted. A key's candidates are the ring slice ``home .. home + pool - 1``
and a tuple goes to the least loaded. Only an old key's pool changes: once per
check interval after the warm-up, with ``currentLoad(w) = 100 sent(w) / total``,
``idealLoad = 100 / W`` and ``idealLoad +- sqrt(idealLoad)`` the thresholds, it
grows by the next worker of the ring when its least-loaded candidate is above
``loadToScaleUp`` and that worker is lighter still, and shrinks by one when at
least two candidates are below ``loadToScaleDown``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from tests.reference_routings._cycles import tuples_with_cycles
from tests.reference_routings._hashes import home

__all__ = ["route"]

BABY, TEEN, OLD = 0, 1, 2


class _KeySpaces:
    """``distinct_key_count`` entries; an entry is [key, count, space, last seen, pool, last check].

    Where the text leaves ties open (equal counts), the entry earlier in the table wins, and a
    new key takes the first free entry: the kernel's choices (seed_rule.py), not documented.
    """

    def __init__(self, p: dict) -> None:
        n = p["distinct_key_count"]
        baby, teen = (max(1, math.floor(n * f)) for f in p["space_fractions"][:2])
        self.capacity = (baby, teen, max(1, n - baby - teen))
        self.entries: list[list | None] = [None] * n
        self.entry_of: dict[str, int] = {}
        self.p = p

    def _members(self, space: int) -> list[int]:
        return [i for i, e in enumerate(self.entries) if e is not None and e[2] == space]

    def _least_frequent(self, members: list[int]) -> int:
        return min(members, key=lambda i: self.entries[i][1])

    def find_or_admit(self, key: str, now: int) -> list:
        at = self.entry_of.get(key)
        if at is None:
            babies = self._members(BABY)
            if len(babies) < self.capacity[BABY]:
                at = self.entries.index(None)
            else:
                at = self._least_frequent(babies)
                del self.entry_of[self.entries[at][0]]
            self.entries[at] = [key, 0, BABY, now, 0, 0]
            self.entry_of[key] = at
        return self.entries[at]

    def _promote(self, lower: int, now: int) -> None:
        upper = lower + 1
        order = sorted(range(len(self.entries)),
                       key=lambda i: -self.entries[i][1] if self.entries[i] else 0)  # fmt: skip
        for i in order:
            entry = self.entries[i]
            if entry is None or entry[2] != lower:
                continue
            members = self._members(upper)
            if len(members) >= self.capacity[upper]:
                weakest = self._least_frequent(members)
                if entry[1] <= self.entries[weakest][1]:
                    break  # no later key is more frequent either
                self.entries[weakest][2] = lower
            entry[2] = upper
            # A new old key starts with the initial pool, its first check one interval later (the
            # kernel's choice: the text only rate-limits checks per key).
            if upper == OLD:
                entry[4], entry[5] = self.p["initial_pool"], now

    def cycle(self, number: int, now: int) -> None:
        """Key-space cycle ``number`` (1, 2, ...), run at the cycle's boundary time ``now``."""
        self._promote(BABY, now)
        if number % self.p["teen_to_old_every"] == 0:
            self._promote(TEEN, now)
        for i, entry in enumerate(self.entries):
            if entry is not None and entry[2] >= TEEN and now - entry[3] > self.p["gc_after_ms"]:
                del self.entry_of[entry[0]]
                self.entries[i] = None


def _scaled_pool(home_worker: int, pool: int, sent: list[int], total: int, p: dict) -> int:
    workers = len(sent)
    ideal = 100.0 / workers
    up, down = ideal + math.sqrt(ideal), ideal - math.sqrt(ideal)
    # Real-valued loads, and scale-down against loadToScaleDown: the project's documented choices.
    loads = [100.0 * sent[(home_worker + j) % workers] / total for j in range(pool)]
    if min(loads) > up and pool < workers:
        following = 100.0 * sent[(home_worker + pool) % workers] / total
        return pool + 1 if following < min(loads) else pool
    if pool > p["initial_pool"] and sum(load < down for load in loads) >= 2:
        return pool - 1
    return pool


def route(workers: int, keys: Iterable[str], times_ms: Iterable[int], p: dict) -> list[int]:
    spaces = _KeySpaces(p)
    sent = [0] * workers
    total = 0
    cycles = 0
    out = []
    for key, now, since_first, ended in tuples_with_cycles(keys, times_ms,
                                                            p["key_space_cycle_ms"]):  # fmt: skip
        for end in ended:
            cycles += 1
            spaces.cycle(cycles, end)
        entry = spaces.find_or_admit(key, now)
        entry[1] += 1
        entry[3] = now
        home_worker = home(key) % workers
        pool = p["initial_pool"]
        if entry[2] == OLD:
            # total > 0: there are no loads before the first routed tuple.
            if (
                since_first >= p["warm_up_ms"]
                and now - entry[5] >= p["check_interval_ms"]
                and total
            ):
                entry[5] = now
                entry[4] = _scaled_pool(home_worker, entry[4], sent, total, p)
            pool = entry[4]
        candidates = [(home_worker + j) % workers for j in range(min(pool, workers))]
        chosen = min(candidates, key=sent.__getitem__)  # ties: the earlier in the ring
        sent[chosen] += 1
        total += 1
        out.append(chosen)
    return out
