"""DYNAMIC_KEY parameters: the seed's defaults, and the adaptive mode's.

``mode: seed`` follows seed 000's text: generational key spaces decide which
keys may grow; an old-space key's consecutive pool grows by one worker (the
next in the ring) when even its least-loaded candidate is above
``loadToScaleUp``, at most once per check interval, after the warm-up.

``mode: adaptive`` keeps the structure (home index, least-loaded candidate,
pools that grow for hot keys) and changes three things, each a parameter:
hot keys are found by a decayed SpaceSaving summary instead of key spaces; a
hot key's pool is sized to its estimated share (``ceil(share * W * (1 +
headroom))``) and grows with workers that are not overloaded (``placement``,
below) rather than the next in the ring; and a pool also grows while all its
members sit above the mean load by more than ``overload_tolerance`` of the mean
and ``overload_share`` of the stream. Cold keys keep ``initial_pool`` workers
(1 in adaptive mode: only hot keys pay for splitting), except that a key whose
share reaches ``relief_share_factor / W`` is also split when its home worker is
above the mean load by more than ``overload_tolerance``: on flat heads (word
streams, where dozens of keys weigh about 1/W) the keys just below the hot
threshold would otherwise pin overloaded workers. ``relief_share_factor: 0``
(with ``placement: least_loaded``) is the adaptive rule without that relief,
routing exactly as before it existed.

``placement`` decides which worker joins a hot key's pool. ``hashed`` (the
default) takes, among the workers not overloaded, the one the key itself ranks
first (a rendezvous hash), so independent splitters that each see part of the
stream grow the same pool; ``least_loaded`` takes the least-loaded worker, as
the adaptive rule did before (``placement: least_loaded`` routes exactly as that
rule did, and with ``relief_share_factor: 0`` as the rule before relief).

Unset fields take their mode's default (see ``MODE_DEFAULTS``) and, in adaptive
mode, their placement's (see ``PLACEMENT_DEFAULTS``).
"""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import Field, model_validator

from silver.groupings.base import GroupingParams

__all__ = ["MODE_DEFAULTS", "PLACEMENT_DEFAULTS", "DynamicKeyParams"]

MODE_DEFAULTS: dict[str, dict[str, Any]] = {
    "seed": {"initial_pool": 2, "warm_up_ms": 15_000, "check_interval_ms": 60_000},
    "adaptive": {"initial_pool": 1, "warm_up_ms": 1_000, "check_interval_ms": 1_000},
}
# Hashed placement, by measurement (docs/benchmarks.md, 2026-11-28): pools sized to
# the share alone, re-examined every 100 ms, grown further while overloaded by more
# than 1.5e-4 of the stream (under the 2e-4 imbalance target), with workers at or
# below the mean load. The 2026-11-26 values (500 ms, 8e-4, slack 0.02) balanced to
# at most 8e-4; least-loaded keeps the rule before hashed placement's values.
PLACEMENT_DEFAULTS: dict[str, dict[str, Any]] = {
    "hashed": {"headroom": 0.0, "check_interval_ms": 100, "overload_tolerance": 0.0,
               "overload_share": 1.5e-4},
    "least_loaded": {"headroom": 0.2, "check_interval_ms": 1_000, "overload_tolerance": 0.01,
                     "overload_share": 0.0},
}  # fmt: skip


class DynamicKeyParams(GroupingParams):
    """Parameters of DYNAMIC_KEY (times are event-time milliseconds).

    Attributes:
        mode: ``seed`` (seed 000's rule as written) or ``adaptive``.
        initial_pool: candidates of a key that has not grown (seed: 2).
        warm_up_ms: no pool grows before this much event time has passed.
        check_interval_ms: a key's pool is re-examined at most this often.
        key_space_cycle_ms: key-space promotion cycle (seed: 15 s); in adaptive
            mode the frequency summary decays by ``decay`` at the same cadence.
        teen_to_old_every: teenage -> old promotion every Nth cycle (seed: 4).
        distinct_key_count: capacity of the key spaces (seed: 100).
        space_fractions: baby / teenage / old shares of that capacity.
        gc_after_ms: teenage/old keys unseen this long are evicted (seed: 1 h).
        hot_share_factor: adaptive: a key is hot when its share >= factor / W.
        error_ratio: adaptive: summary error as a fraction of that threshold.
        headroom: adaptive: pool = ceil(share * W * (1 + headroom)).
        overload_tolerance: adaptive: grow a pool while its least-loaded member
            is above the mean load by more than this fraction.
        decay: adaptive: summary counts are multiplied by this every cycle.
        relief_share_factor: adaptive: a key whose share >= factor / W is split
            when its home is overloaded; 0 turns this off.
        placement: adaptive: ``hashed`` (the key's own ranking among workers
            not overloaded) or ``least_loaded`` picks a pool's next member.
        placement_slack: hashed: a worker is not overloaded while its load is
            at most this fraction above the mean.
        overload_share: adaptive: a pool is overloaded only when its
            least-loaded member is above the mean by more than this share of
            the stream as well (``overload_tolerance`` is relative to the mean).
    """

    mode: Literal["seed", "adaptive"] = "adaptive"
    initial_pool: int = Field(default=0, ge=0)
    warm_up_ms: int = Field(default=-1, ge=-1)
    check_interval_ms: int = Field(default=-1, ge=-1)
    key_space_cycle_ms: int = Field(default=15_000, gt=0)
    teen_to_old_every: int = Field(default=4, ge=1)
    distinct_key_count: int = Field(default=100, ge=3)
    space_fractions: tuple[float, float, float] = (0.5, 0.4, 0.1)
    gc_after_ms: int = Field(default=3_600_000, gt=0)
    hot_share_factor: float = Field(default=0.25, gt=0, le=1)
    error_ratio: float = Field(default=0.25, gt=0, le=1)
    headroom: float = Field(default=0.2, ge=0)
    overload_tolerance: float = Field(default=0.01, ge=0)
    decay: float = Field(default=0.5, gt=0, le=1)
    # 0.1 by measurement (docs/benchmarks.md, 2026-11-25): 0.05 and 0.02 balance
    # no better and cost more dist_cost with several splitters.
    relief_share_factor: float = Field(default=0.1, ge=0, le=1)
    placement: Literal["hashed", "least_loaded"] = "hashed"
    placement_slack: float = Field(default=0.0, ge=0)
    overload_share: float = Field(default=PLACEMENT_DEFAULTS["hashed"]["overload_share"], ge=0, le=1)

    @model_validator(mode="before")
    @classmethod
    def _fill_mode_defaults(cls, data: Any) -> Any:
        if isinstance(data, dict):
            mode = data.get("mode", "adaptive")
            defaults = MODE_DEFAULTS.get(mode, {})
            if mode == "adaptive":
                placement = data.get("placement", "hashed")
                defaults = {**defaults, **PLACEMENT_DEFAULTS.get(placement, {})}
            data = {**defaults, **{k: v for k, v in data.items() if v is not None}}
        return data

    @model_validator(mode="after")
    def _check(self) -> DynamicKeyParams:
        if self.initial_pool < 1:
            raise ValueError("initial_pool must be at least 1")
        if abs(sum(self.space_fractions) - 1.0) > 1e-9 or min(self.space_fractions) <= 0:
            raise ValueError("space_fractions must be three positive shares summing to 1")
        return self

    def space_capacities(self) -> tuple[int, int, int]:
        """Baby, teenage and old capacities (each at least 1)."""
        baby, teen, _ = self.space_fractions
        n = self.distinct_key_count
        baby_cap = max(1, math.floor(n * baby))
        teen_cap = max(1, math.floor(n * teen))
        return baby_cap, teen_cap, max(1, n - baby_cap - teen_cap)

    def tracked_share_factor(self) -> float:
        """The smallest share factor the adaptive mode acts on (sizes its summary)."""
        if self.relief_share_factor > 0:
            return min(self.hot_share_factor, self.relief_share_factor)
        return self.hot_share_factor
