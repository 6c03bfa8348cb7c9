"""Stable key hashing shared by every grouping.

Never use the built-in ``hash()`` for routing: it is salted per process, so two
Spark executors (or a replay) would disagree. Everything here is MurmurHash3
(the ``mmh3`` library for one key, a compiled kernel that ``mmh3`` checks for a
batch), identical on every machine and run.
"""

from __future__ import annotations

from dataclasses import dataclass

import mmh3
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from silver.groupings._murmur3 import hash_utf8_column

__all__ = ["KeyHashes", "hash_keys", "stable_hash"]

# Seeds of the two independent hash functions (PKG's H1 and H2) and of the
# 64-bit fingerprint that stands for a key inside the frequency sketches.
HOME_SEED = 0
ALT_SEED = 0x9E3779B9
FINGERPRINT_SEED = 0x5BD1E995


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
        wanted = np.asarray(fingerprints, dtype=np.int64)
        # Map only the batch's keys that were asked for (a few): a batch has thousands.
        hits = np.isin(self.distinct_fingerprints, wanted)
        lookup = dict(
            zip(self.distinct_fingerprints[hits].tolist(), self.distinct_keys[hits], strict=True)
        )
        return [lookup.get(fp) for fp in wanted.tolist()]


_SEEDS = (HOME_SEED, ALT_SEED, FINGERPRINT_SEED)


def _utf8_column(keys: np.ndarray | pa.Array) -> pa.Array:
    if isinstance(keys, pa.Array):
        return keys.cast(pa.large_string())
    try:
        return pa.array(keys, type=pa.large_string())
    except (pa.ArrowTypeError, pa.ArrowInvalid):
        # Not all str (the contract says they are): hash their str(), as mmh3 would be given.
        return pa.array([str(k) for k in keys], type=pa.large_string())


def _hash_distinct(keys: np.ndarray | pa.Array) -> np.ndarray:
    """``(len(keys), 3)`` int64: home, alt and fingerprint hash of each key."""
    column = _utf8_column(keys)
    _, offsets, data = column.buffers()
    if data is None:  # no key has a byte (all empty, or none at all)
        data = pa.py_buffer(b"\0")
    return hash_utf8_column(
        np.frombuffer(data, dtype=np.uint8), np.frombuffer(offsets, dtype=np.int64),
        column.offset, len(column), _SEEDS,
    )  # fmt: skip


def _factorize(keys: np.ndarray | list[str] | pd.Series | pa.Array | pa.ChunkedArray
               ) -> tuple[np.ndarray, np.ndarray | pa.Array]:  # fmt: skip
    """Each key's code and the distinct keys, in first-seen order."""
    if isinstance(keys, pa.ChunkedArray):
        keys = keys.combine_chunks()
    if isinstance(keys, pa.Array):
        if keys.null_count:
            raise ValueError(f"{keys.null_count} of the keys are null")
        # Arrow hashes its string buffers directly: no Python str per key.
        encoded = pc.dictionary_encode(keys)
        return encoded.indices.to_numpy(), encoded.dictionary
    return pd.factorize(np.asarray(keys, dtype=object), sort=False)


def hash_keys(keys: np.ndarray | list[str] | pd.Series | pa.Array | pa.ChunkedArray) -> KeyHashes:
    """Hash a batch of string keys, hashing each distinct key once.

    The distinct keys are found by ``pandas.factorize`` (Arrow's dictionary
    encoding for an Arrow array) and hashed in one compiled pass over their
    UTF-8 bytes (:mod:`silver.groupings._murmur3`); the values are those of
    :func:`stable_hash` and ``mmh3.hash64``.

    Args:
        keys: the batch's keys, in order.

    Returns:
        Arrays aligned with ``keys``.
    """
    codes, uniques = _factorize(keys)
    table = _hash_distinct(uniques)
    if isinstance(uniques, pa.Array):
        uniques = uniques.to_numpy(zero_copy_only=False)
    return KeyHashes(
        home=table[:, 0][codes].astype(np.uint32),
        alt=table[:, 1][codes].astype(np.uint32),
        fingerprint=table[:, 2][codes],
        distinct_keys=uniques,
        distinct_fingerprints=table[:, 2],
    )
