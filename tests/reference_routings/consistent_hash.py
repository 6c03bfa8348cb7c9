"""CONSISTENT_HASH (seed 002): a murmur3 token ring, redistributed by halving or doubling.

Token ``j`` of worker ``i`` is the string ``"token-{i}-{j}"`` at ring position
``murmur3(token)``; a key at ``murmur3(key)`` goes to the first token clockwise
(binary search). At the end of each check interval, ``x`` the most loaded worker
and ``Qs`` the second largest load: if ``Qmax > Qs (1 + tau)``, call
``redistribute(x)``. Halving: every worker starts with ``initial_tokens`` and
``x`` loses half of its tokens; doubling: every worker starts with one token and
all but ``x`` double theirs.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

import mmh3
import numpy as np

from tests.reference_routings._hashes import home, overrides

__all__ = ["DEFAULTS", "route"]

DEFAULTS = {"strategy": "doubling", "tau": 0.2, "check_interval_ms": 1000, "initial_tokens": 8,
            "max_rounds": 8, "max_tokens_per_worker": 1024}  # fmt: skip


@lru_cache(maxsize=8)
def _all_tokens(workers: int, per_worker: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Position, worker and number of every token a ring may hold, clockwise."""
    owners = np.repeat(np.arange(workers), per_worker)
    numbers = np.tile(np.arange(per_worker), workers)
    pairs = zip(owners.tolist(), numbers.tolist(), strict=True)
    positions = np.array([mmh3.hash(f"token-{i}-{j}", 0, signed=False) for i, j in pairs])
    # Equal positions: the lowest (worker, token number) comes first (_ring.py's documented tie).
    clockwise = np.lexsort((numbers, owners, positions))
    return positions[clockwise], owners[clockwise], numbers[clockwise]


class _Ring:
    def __init__(self, tokens: list[int], per_worker: int) -> None:
        positions, owners, numbers = _all_tokens(len(tokens), per_worker)
        # Worker i holds tokens 0 .. T_i - 1: halving drops the highest-numbered, doubling adds.
        held = numbers < np.array(tokens)[owners]
        self.positions, self.owners = positions[held], owners[held]

    def owner(self, position: int) -> int:
        # The first token at or after the key's position (binary search), else wrap to the first.
        at = int(np.searchsorted(self.positions, position, side="left"))
        return int(self.owners[at % len(self.owners)])


def route(workers: int, keys: Iterable[str], times_ms: Iterable[int],
          params: dict | None = None) -> list[int]:  # fmt: skip
    p = overrides(DEFAULTS, params)
    halving = p["strategy"] == "halving"
    per_worker = p["initial_tokens"] if halving else p["max_tokens_per_worker"]
    tokens = [p["initial_tokens"] if halving else 1] * workers
    rounds = [0] * workers
    ring = _Ring(tokens, per_worker)
    # Q_i: tuples routed to worker i in the current interval (the project's queue size).
    loads = [0] * workers
    interval = None
    out = []
    for key, time_ms in zip(keys, times_ms, strict=True):
        this = int(time_ms) // p["check_interval_ms"]
        if interval is not None and this > interval:
            if workers > 1:
                x = max(range(workers), key=loads.__getitem__)  # a tie for Qmax never triggers
                q_s = max(q for i, q in enumerate(loads) if i != x)
                # Each worker triggers at most max_rounds redistributions, no-ops included.
                if loads[x] > q_s * (1 + p["tau"]) and rounds[x] < p["max_rounds"]:
                    rounds[x] += 1
                    before = tokens
                    if halving:  # x keeps half its tokens; with one left it is "out of halving"
                        tokens = [max(1, t // 2) if i == x else t for i, t in enumerate(tokens)]
                    else:  # all but x double, up to max_tokens_per_worker (the ring stays bounded)
                        tokens = [t if i == x else min(2 * t, per_worker)
                                  for i, t in enumerate(tokens)]  # fmt: skip
                    if tokens != before:
                        ring = _Ring(tokens, per_worker)
            loads = [0] * workers
        # A late tuple counts in the current interval: intervals never go back (documented).
        interval = this if interval is None else max(interval, this)
        chosen = ring.owner(home(key))
        loads[chosen] += 1
        out.append(chosen)
    return out
