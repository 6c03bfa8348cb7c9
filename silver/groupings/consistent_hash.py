"""CONSISTENT_HASH: a murmur3 token ring rebalanced by token halving or doubling (seed 002).

A key goes to the owner of the first token clockwise from its position
(``hashes.home``, murmur3 of the key with seed 0). Loads ``Q_i`` are the tuples
routed to worker ``i`` in the current check interval of event time. When an
interval ends (a tuple arrives with a larger ``floor(event_time /
check_interval_ms)``) and ``Qmax > Qs * (1 + tau)`` (``Qs`` the second largest
load), the grouping calls ``redistribute(x)`` for ``x = argmax Q`` (lowest index
on ties), then resets the loads:

- ``halving``: every worker starts with ``initial_tokens`` (a power of 2);
  ``x`` loses the highest-numbered half of its tokens, never going below one
  (a worker with one token has "run out of halving": no change).
- ``doubling``: every worker starts with one token; every worker except ``x``
  doubles its tokens, up to ``max_tokens_per_worker`` (the ring stays bounded:
  at most ``W * max_tokens_per_worker`` tokens; a capped worker stays capped).

Each worker may trigger at most ``max_rounds`` redistributions (seed 002's
experiment 2); a triggered no-op (out of halving, or everyone capped) counts as
a round. A tuple whose time is earlier than the current interval (out of
order) counts in the current interval: intervals never go back, so replays and
any batch split route identically.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Self

import numpy as np
from pydantic import Field, model_validator

from silver.groupings._ring import Ring, build_ring
from silver.groupings.base import Grouping, GroupingParams
from silver.groupings.hashing import KeyHashes

__all__ = ["ConsistentHashGrouping", "ConsistentHashParams", "ConsistentHashState"]

# Interval index before the first tuple: any real tuple starts a later interval,
# and closing this one (all loads zero) never triggers a redistribution.
_BEFORE_FIRST = -(2**63)


def _is_power_of_two(value: int) -> bool:
    return value >= 1 and value & (value - 1) == 0


class ConsistentHashParams(GroupingParams):
    """Parameters of CONSISTENT_HASH (times are event-time milliseconds).

    Attributes:
        strategy: how ``redistribute`` changes the tokens.
        tau: redistribute when ``Qmax > Qs * (1 + tau)`` (seed 002 uses 0.2).
        check_interval_ms: length of a load-check interval.
        initial_tokens: tokens per worker at the start (``halving`` only; a power of 2).
        max_rounds: redistributions each worker may trigger.
        max_tokens_per_worker: cap on a worker's tokens (``doubling``; a power of 2).
    """

    strategy: Literal["halving", "doubling"] = "doubling"
    tau: float = Field(default=0.2, ge=0)
    check_interval_ms: int = Field(default=1000, gt=0)
    initial_tokens: int = Field(default=8, ge=1, le=1 << 16)
    max_rounds: int = Field(default=8, ge=0)
    max_tokens_per_worker: int = Field(default=1024, ge=1, le=1 << 16)

    @model_validator(mode="after")
    def _powers_of_two(self) -> Self:
        for name in ("initial_tokens", "max_tokens_per_worker"):
            if not _is_power_of_two(getattr(self, name)):
                raise ValueError(f"{name} must be a power of 2, got {getattr(self, name)}")
        if self.initial_tokens > self.max_tokens_per_worker:
            raise ValueError("initial_tokens must not exceed max_tokens_per_worker")
        return self

    @property
    def tokens_cap(self) -> int:
        """The most tokens a worker can ever hold under this strategy."""
        return self.initial_tokens if self.strategy == "halving" else self.max_tokens_per_worker


@dataclass
class ConsistentHashState:
    """Everything CONSISTENT_HASH needs to resume (the ring is rebuilt from ``tokens``).

    Attributes:
        workers: worker count the state was built for.
        tokens: int64 [W], token count of each worker.
        rounds: int64 [W], redistributions each worker has triggered.
        interval: index ``floor(t / check_interval_ms)`` of the current interval.
        counts: int64 [W], tuples routed to each worker in the current interval.
    """

    workers: int
    tokens: np.ndarray
    rounds: np.ndarray
    interval: int
    counts: np.ndarray


class ConsistentHashGrouping(Grouping[ConsistentHashParams, ConsistentHashState]):
    """One worker per key at a time; the ring moves key ranges off a straggler."""

    name = "CONSISTENT_HASH"
    params_type = ConsistentHashParams
    state_type = ConsistentHashState

    def initial_state(self) -> ConsistentHashState:
        start = self.params.initial_tokens if self.params.strategy == "halving" else 1
        return ConsistentHashState(
            workers=self.workers,
            tokens=np.full(self.workers, start, dtype=np.int64),
            rounds=np.zeros(self.workers, dtype=np.int64),
            interval=_BEFORE_FIRST,
            counts=np.zeros(self.workers, dtype=np.int64),
        )

    def tokens_per_worker(self) -> np.ndarray:
        """Current token count of each worker (a copy)."""
        return self.state.tokens.copy()

    def rounds_per_worker(self) -> np.ndarray:
        """Redistributions each worker has triggered so far (a copy)."""
        return self.state.rounds.copy()

    def ring(self) -> Ring:
        """The current ring (memoized by token counts; do not mutate it)."""
        tokens = tuple(int(t) for t in self.state.tokens)
        return build_ring(tokens, self.params.tokens_cap)

    def _route(self, hashes: KeyHashes, event_times_ms: np.ndarray) -> np.ndarray:
        s = self.state
        # Running maximum: an out-of-order tuple stays in the current interval.
        intervals = np.maximum.accumulate(event_times_ms // self.params.check_interval_ms)
        np.maximum(intervals, s.interval, out=intervals)
        cuts = np.flatnonzero(intervals[1:] != intervals[:-1]) + 1
        starts = np.concatenate(([0], cuts))
        stops = np.concatenate((cuts, [len(intervals)]))
        out = np.empty(len(intervals), dtype=np.int32)
        ring = self.ring()
        for start, stop in zip(starts.tolist(), stops.tolist(), strict=True):
            if intervals[start] > s.interval:
                if self._close_interval():
                    ring = self.ring()
                s.interval = int(intervals[start])
            routed = ring.lookup(hashes.home[start:stop])
            s.counts += np.bincount(routed, minlength=self.workers)
            out[start:stop] = routed
        return out

    def _close_interval(self) -> bool:
        """Check the ending interval's loads; True if the tokens changed."""
        s = self.state
        changed = False
        if self.workers > 1:
            x = int(np.argmax(s.counts))  # lowest index on ties
            q_max = int(s.counts[x])
            q_second = int(np.max(np.delete(s.counts, x)))
            if q_max > q_second * (1.0 + self.params.tau) and s.rounds[x] < self.params.max_rounds:
                s.rounds[x] += 1
                changed = self._redistribute(x)
        s.counts[:] = 0
        return changed

    def _redistribute(self, x: int) -> bool:
        """Seed 002's ``redistribute(node_id)``; True if any token count changed."""
        tokens = self.state.tokens
        before = tokens.copy()
        if self.params.strategy == "halving":
            tokens[x] = max(1, int(tokens[x]) // 2)
        else:
            others = np.arange(self.workers) != x
            tokens[others] = np.minimum(tokens[others] * 2, self.params.max_tokens_per_worker)
        return not np.array_equal(before, tokens)
