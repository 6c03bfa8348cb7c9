"""W_CHOICES (Nasir et al., ICDE 2016): heavy keys to the least-loaded of all W, others as PKG.

Heavy: the key's SpaceSaving estimate is at least ``theta * N`` (``theta =
heavy_threshold_factor / W``, ``N`` the splitter's tuples so far, this one
included) and at least ``min_heavy_count``. The summary has ``max(16,
ceil(1 / (theta * error_ratio)))`` counters (w_choices.py, space_saving.py).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from tests.reference_routings._hashes import candidates, overrides
from tests.reference_routings._space_saving import SpaceSaving

__all__ = ["DEFAULTS", "route"]

DEFAULTS = {"heavy_threshold_factor": 0.2, "error_ratio": 0.25, "min_heavy_count": 10}


def route(workers: int, keys: Iterable[str], times_ms: Iterable[int],
          params: dict | None = None) -> list[int]:  # fmt: skip
    p = overrides(DEFAULTS, params)
    theta = p["heavy_threshold_factor"] / workers
    summary = SpaceSaving(max(16, math.ceil(1.0 / (theta * p["error_ratio"]))))
    sent = [0] * workers
    out = []
    for n, key in enumerate(keys, start=1):
        estimate, _ = summary.offer(key)
        if estimate >= theta * n and estimate >= p["min_heavy_count"]:
            chosen = min(range(workers), key=sent.__getitem__)  # ties: lowest index (the kernel's)
        else:
            first, second = candidates(key, workers)
            chosen = second if sent[second] < sent[first] else first  # ties: first (documented)
        sent[chosen] += 1
        out.append(chosen)
    return out
