"""Stable key hashing shared by every grouping.

Never use the built-in ``hash()`` for routing: it is salted per process, so two
Spark executors (or a replay) would disagree. Everything here is MurmurHash3
(the ``mmh3`` library), identical on every machine and run.
"""

from __future__ import annotations

from dataclasses import dataclass

import mmh3
import numpy as np
import pandas as pd

__all__ = ["KeyHashes", "hash_keys", "stable_hash"]

# Seeds of the two independent hash functions (PKG's H1 and H2) and of the
# 64-bit fingerprint that stands for a key inside the frequency sketches.
HOME_SEED = 0
ALT_SEED = 0x9E3779B9
FINGERPRINT_SEED = 0x5BD1E995

_CACHE_LIMIT = 1 << 20


def stable_hash(key: str, seed: int = HOME_SEED) -> int:
    """Unsigned 32-bit MurmurHash3 of ``key`` (UTF-8)."""
    return mmh3.hash(key, seed, signed=False)


@dataclass(frozen=True, slots=True)
class KeyHashes:
    """Per-tuple hashes of a batch of keys, aligned with the batch.

    Attributes:
        home: unsigned 32-bit hash with ``HOME_SEED`` (KEY grouping, home index).
        alt: unsigned 32-bit hash with ``ALT_SEED`` (PKG's second choice).
        fingerprint: signed 64-bit hash identifying the key in sketches.
        distinct_keys: the batch's distinct keys, in first-seen order.
        distinct_fingerprints: their fingerprints, aligned with ``distinct_keys``.
    """

    home: np.ndarray
    alt: np.ndarray
    fingerprint: np.ndarray
    distinct_keys: np.ndarray
    distinct_fingerprints: np.ndarray

    def names_of(self, fingerprints: np.ndarray) -> list[str | None]:
        """Key names for fingerprints seen in this batch (None if not seen)."""
        lookup = dict(zip(self.distinct_fingerprints.tolist(), self.distinct_keys, strict=True))
        return [lookup.get(int(fp)) for fp in fingerprints]


# Memo of key -> (home, alt, fingerprint). It holds derived values only, so it
# never changes a routing decision; it just spares re-hashing hot keys.
_memo: dict[str, tuple[int, int, int]] = {}


def _hash_one(key: str) -> tuple[int, int, int]:
    cached = _memo.get(key)
    if cached is None:
        if len(_memo) >= _CACHE_LIMIT:
            _memo.clear()
        cached = (
            mmh3.hash(key, HOME_SEED, signed=False),
            mmh3.hash(key, ALT_SEED, signed=False),
            mmh3.hash64(key, FINGERPRINT_SEED)[0],
        )
        _memo[key] = cached
    return cached


def hash_keys(keys: np.ndarray | list[str] | pd.Series) -> KeyHashes:
    """Hash a batch of string keys, hashing each distinct key once.

    Args:
        keys: the batch's keys, in order.

    Returns:
        Arrays aligned with ``keys``.
    """
    codes, uniques = pd.factorize(np.asarray(keys, dtype=object), sort=False)
    table = np.array([_hash_one(str(k)) for k in uniques], dtype=np.int64).reshape(-1, 3)
    return KeyHashes(
        home=table[:, 0][codes].astype(np.uint32),
        alt=table[:, 1][codes].astype(np.uint32),
        fingerprint=table[:, 2][codes],
        distinct_keys=uniques,
        distinct_fingerprints=table[:, 2],
    )
