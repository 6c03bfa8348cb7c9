"""DYNAMIC_KEY's adaptive rule (docs/groupings.md; adaptive_rule.py's docstring), per tuple.

Every tuple is counted in a SpaceSaving summary whose counts, and the stream
length, decay by ``decay`` every key-space cycle. Once per check interval after
the warm-up a key is examined: with an estimated share of at least ``theta =
hot_share_factor / W``, or at least ``relief_share_factor / W`` while its home
worker is overloaded, it becomes hot; a hot key's pool grows to ``ceil(share * W
* (1 + headroom))`` members, and by one more when even its lightest member is
overloaded; below half the lower threshold it is cold again. Hot keys go to the
lightest member of their pool, cold keys to the lightest of their ``initial_pool``
ring candidates. Overloaded: above the mean load by more than
``overload_tolerance`` of the mean and by more than ``overload_share`` of the stream.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from tests.reference_routings._cycles import tuples_with_cycles
from tests.reference_routings._hashes import fingerprint, home
from tests.reference_routings._space_saving import SpaceSaving

__all__ = ["rendezvous_score", "route"]

_MASK = (1 << 64) - 1
_GOLDEN = 0x9E3779B97F4A7C15


def rendezvous_score(key: str, worker: int) -> int:
    """How much ``key`` prefers ``worker``: murmur3's fmix64 of ``fp ^ (w + 1) * phi``."""
    k = (fingerprint(key) & _MASK) ^ (((worker + 1) * _GOLDEN) & _MASK)
    k ^= k >> 33
    k = (k * 0xFF51AFD7ED558CCD) & _MASK
    k ^= k >> 33
    k = (k * 0xC4CEB9FE1A85EC53) & _MASK
    return k ^ (k >> 33)


class _Adaptive:
    def __init__(self, workers: int, p: dict) -> None:
        self.workers, self.p = workers, p
        self.theta = p["hot_share_factor"] / workers
        self.relief = p["relief_share_factor"] / workers
        # The summary is sized for, and keys cool down below half of, the lower threshold in use.
        self.tracked = min(self.theta, self.relief) if self.relief > 0 else self.theta
        self.summary = SpaceSaving(max(16, math.ceil(1.0 / (self.tracked * p["error_ratio"]))))
        # At most ceil(4 / (3 * tracked)) + 1 pools (state.py); a key finding none free stays cold.
        self.max_pools = math.ceil(4.0 / (3.0 * self.tracked)) + 1
        self.pools: dict[str, list[int]] = {}  # hot key -> its workers, in order of joining
        self.last_check: dict[str, int] = {}
        self.sent = [0] * workers
        self.total = 0

    def overloaded(self, load: int) -> bool:
        mean = self.total / self.workers
        return (load - mean > self.p["overload_tolerance"] * mean
                and load - mean > self.p["overload_share"] * self.total)  # fmt: skip

    def grow(self, key: str, pool: list[int], below: float) -> bool:
        """Add one worker lighter than ``below`` to ``pool``."""
        outside = [w for w in range(self.workers) if w not in pool]
        if self.p["placement"] == "hashed":
            limit = self.total / self.workers * (1 + self.p["placement_slack"])
            preferred = [w for w in outside if self.sent[w] <= limit and self.sent[w] < below]
            if preferred:
                pool.append(max(preferred, key=lambda w: rendezvous_score(key, w)))
                return True
        lightest = min(outside, key=self.sent.__getitem__, default=None)  # ties: lowest (kernel's)
        if lightest is None or self.sent[lightest] >= below:
            return False
        pool.append(lightest)
        return True

    def examine(self, key: str, share: float, home_worker: int) -> None:
        pool = self.pools.get(key)
        if pool is None:
            relieves = (self.relief > 0 and share >= self.relief
                        and self.overloaded(self.sent[home_worker]))  # fmt: skip
            if (share < self.theta and not relieves) or len(self.pools) >= self.max_pools:
                return
            size = min(self.p["initial_pool"], self.workers)
            pool = self.pools[key] = [(home_worker + j) % self.workers for j in range(size)]
        elif share < self.tracked / 2:
            del self.pools[key]
            return
        target = min(self.workers, math.ceil(share * self.workers * (1 + self.p["headroom"])))
        while len(pool) < target and self.grow(key, pool, math.inf):
            pass
        if len(pool) < self.workers:
            floor = min(self.sent[w] for w in pool)
            # One worker per examination, and only one lighter than the pool's lightest (seed 000's
            # acceptance rule).
            if self.overloaded(floor):
                self.grow(key, pool, floor)


def route(workers: int, keys: Iterable[str], times_ms: Iterable[int], p: dict) -> list[int]:
    rule = _Adaptive(workers, p)
    weighted = 0.0  # the stream length, decayed like the counts
    out = []
    for key, now, since_first, ended in tuples_with_cycles(keys, times_ms,
                                                            p["key_space_cycle_ms"]):  # fmt: skip
        for _ in ended:
            rule.summary.decay(p["decay"])
            weighted *= p["decay"]
        weighted += 1.0
        estimate, displaced = rule.summary.offer(key)
        if displaced is not None:  # a key the summary forgets is cold and unexamined again
            rule.pools.pop(displaced, None)
            rule.last_check.pop(displaced, None)
        home_worker = home(key) % workers
        last = rule.last_check.get(key)
        if since_first >= p["warm_up_ms"] and (
            last is None or now - last >= p["check_interval_ms"]
        ):
            rule.last_check[key] = now
            rule.examine(key, estimate / weighted, home_worker)
        pool = rule.pools.get(key)
        if pool is None:
            pool = [(home_worker + j) % workers for j in range(min(p["initial_pool"], workers))]
        chosen = min(pool, key=rule.sent.__getitem__)  # ties: the earlier member (the kernel's)
        rule.sent[chosen] += 1
        rule.total += 1
        out.append(chosen)
    return out
