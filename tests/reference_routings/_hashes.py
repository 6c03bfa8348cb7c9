"""The murmur3 hashes of one key, straight from ``mmh3`` (no production code).

``home`` and ``alt`` are PKG's two hash functions (design.md: two seeded murmur3
hashes); ``fingerprint`` is the signed 64-bit hash that names a key where the
project breaks ties by key identity.
"""

from __future__ import annotations

import mmh3

from silver.groupings.hashing import ALT_SEED, FINGERPRINT_SEED, HOME_SEED

__all__ = ["alt", "candidates", "fingerprint", "home", "overrides"]


def home(key: str) -> int:
    """Unsigned 32-bit murmur3 of the key, seed ``HOME_SEED`` (KEY's hash, the home index)."""
    return mmh3.hash(key, HOME_SEED, signed=False)


def alt(key: str) -> int:
    """Unsigned 32-bit murmur3 of the key, seed ``ALT_SEED`` (PKG's second hash)."""
    return mmh3.hash(key, ALT_SEED, signed=False)


def fingerprint(key: str) -> int:
    """Signed 64-bit murmur3 (first half of x64_128), seed ``FINGERPRINT_SEED``."""
    return mmh3.hash64(key, FINGERPRINT_SEED)[0]


def candidates(key: str, workers: int) -> tuple[int, int]:
    """PARTIAL_KEY's two candidate workers: home worker first."""
    first = home(key) % workers
    if workers == 1:
        return first, first
    # "Forced distinct" (design.md), the project's way: the second is 1..W-1 steps after the first.
    return first, (first + 1 + alt(key) % (workers - 1)) % workers


def overrides(defaults: dict, params: dict | None) -> dict:
    """``defaults`` updated by ``params``; a name the reference does not know is an error."""
    unknown = set(params or {}) - set(defaults)
    if unknown:
        raise ValueError(f"the reference has no parameter {sorted(unknown)}")
    return {**defaults, **(params or {})}
