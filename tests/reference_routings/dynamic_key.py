"""DYNAMIC_KEY's parameters as documented (docs/groupings.md, design.md), and its two modes.

``mode: seed`` is seed 000's rule (:mod:`.dynamic_key_seed`); ``mode: adaptive``,
the default, the project's rule (:mod:`.dynamic_key_adaptive`). Unset
parameters take their mode's default, and in adaptive mode their placement's.
"""

from __future__ import annotations

from collections.abc import Iterable

from tests.reference_routings import dynamic_key_adaptive, dynamic_key_seed
from tests.reference_routings._hashes import overrides

__all__ = ["DEFAULTS", "resolve", "route"]

DEFAULTS = {
    "mode": "adaptive", "key_space_cycle_ms": 15_000, "teen_to_old_every": 4,
    "distinct_key_count": 100, "space_fractions": (0.5, 0.4, 0.1), "gc_after_ms": 3_600_000,
    "hot_share_factor": 0.25, "error_ratio": 0.25, "decay": 0.5, "relief_share_factor": 0.1,
    "placement": "hashed", "placement_slack": 0.0,
    # Set by mode and placement below.
    "initial_pool": None, "warm_up_ms": None, "check_interval_ms": None, "headroom": None,
    "overload_tolerance": None, "overload_share": None,
}  # fmt: skip
_BY_MODE = {
    "seed": {"initial_pool": 2, "warm_up_ms": 15_000, "check_interval_ms": 60_000},
    "adaptive": {"initial_pool": 1, "warm_up_ms": 1_000},
}  # fmt: skip
_BY_PLACEMENT = {
    "hashed": {"headroom": 0.0, "check_interval_ms": 100, "overload_tolerance": 0.0,
               "overload_share": 1.5e-4},
    "least_loaded": {"headroom": 0.2, "check_interval_ms": 1_000, "overload_tolerance": 0.01,
                     "overload_share": 0.0},
}  # fmt: skip


def resolve(params: dict | None) -> dict:
    """Every parameter, the unset ones from their mode's and placement's defaults."""
    given = {k: v for k, v in overrides(DEFAULTS, params).items() if v is not None}
    defaults = {**DEFAULTS, **_BY_MODE[given["mode"]]}
    if given["mode"] == "adaptive":
        defaults.update(_BY_PLACEMENT[given["placement"]])
    return {**defaults, **given}


def route(workers: int, keys: Iterable[str], times_ms: Iterable[int],
          params: dict | None = None) -> list[int]:  # fmt: skip
    p = resolve(params)
    rule = dynamic_key_seed if p["mode"] == "seed" else dynamic_key_adaptive
    return rule.route(workers, keys, times_ms, p)
