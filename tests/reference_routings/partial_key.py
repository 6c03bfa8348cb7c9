"""PARTIAL_KEY: two candidates, the one this splitter has sent fewer tuples to (PKG, seed 001)."""

from __future__ import annotations

from collections.abc import Iterable

from tests.reference_routings._hashes import candidates, overrides

__all__ = ["route"]


def route(workers: int, keys: Iterable[str], times_ms: Iterable[int],
          params: dict | None = None) -> list[int]:  # fmt: skip
    overrides({}, params)
    sent = [0] * workers
    out = []
    for key in keys:
        first, second = candidates(key, workers)
        # Ties go to the first (home) candidate: the project's choice (partial_key.py docstring).
        chosen = second if sent[second] < sent[first] else first
        sent[chosen] += 1
        out.append(chosen)
    return out
