"""KEY: ``murmur3(key) mod W`` (seed 000, design.md)."""

from __future__ import annotations

from collections.abc import Iterable

from tests.reference_routings._hashes import home, overrides

__all__ = ["route"]


def route(workers: int, keys: Iterable[str], times_ms: Iterable[int],
          params: dict | None = None) -> list[int]:  # fmt: skip
    overrides({}, params)
    return [home(key) % workers for key in keys]
