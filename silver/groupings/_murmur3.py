"""MurmurHash3 over a column of UTF-8 strings (Arrow layout), compiled.

Routing needs three murmur3 hashes of every distinct key of a batch. Called once
per key through ``mmh3`` (a C call, a tuple and a list entry each), hashing cost
1-1.5 µs of CPU per distinct key in Python, which held routing to about 1 M
tuples per CPU-second on keys with a large vocabulary. No maintained library hashes
a whole string column with murmur3 (pyarrow, pandas and polars ship other
hashes), so these kernels walk an Arrow string buffer in one compiled loop.

They compute exactly what ``mmh3.hash(key, seed, signed=False)`` and
``mmh3.hash64(key, seed)[0]`` return for the key's UTF-8 bytes (Austin
Appleby's MurmurHash3_x86_32 and the first half of MurmurHash3_x64_128);
``tests/unit/silver/groupings/test_murmur3.py`` holds them to ``mmh3`` on every
length up to several blocks and on random Unicode text.
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["fmix64", "hash_utf8_column"]

_M32 = np.uint64(0xFFFFFFFF)
_C1_32 = np.uint64(0xCC9E2D51)
_C2_32 = np.uint64(0x1B873593)
_C1_64 = np.uint64(0x87C37B91114253D5)
_C2_64 = np.uint64(0x4CF5AD432745937F)
_U = np.uint64  # every operand stays uint64: numba turns uint64-with-int64 into float64


@numba.njit(inline="always")
def _rotl32(x, r):
    return ((x << _U(r)) | (x >> _U(32 - r))) & _M32


@numba.njit(inline="always")
def _rotl64(x, r):
    return (x << _U(r)) | (x >> _U(64 - r))


@numba.njit(inline="always")
def _fmix32(h):
    h ^= h >> _U(16)
    h = (h * _U(0x85EBCA6B)) & _M32
    h ^= h >> _U(13)
    h = (h * _U(0xC2B2AE35)) & _M32
    h ^= h >> _U(16)
    return h


@numba.njit(inline="always")
def fmix64(k):
    """MurmurHash3's 64-bit finalizer: a bijective mix of a uint64."""
    k ^= k >> _U(33)
    k *= _U(0xFF51AFD7ED558CCD)
    k ^= k >> _U(33)
    k *= _U(0xC4CEB9FE1A85EC53)
    k ^= k >> _U(33)
    return k


@numba.njit(inline="always")
def _load(data, at, width):
    # Little-endian word of ``width`` bytes (the reference reads blocks little-endian).
    value = _U(0)
    for i in range(width):
        value |= _U(data[at + i]) << _U(8 * i)
    return value


@numba.njit(inline="always")
def _scramble32(k):
    k = (k * _C1_32) & _M32
    k = _rotl32(k, 15)
    return (k * _C2_32) & _M32


@numba.njit(cache=True, nogil=True)
def murmur3_32(data, start, end, seed):
    """MurmurHash3_x86_32 of ``data[start:end]`` (uint8) with ``seed``, as uint64."""
    length = end - start
    h = _U(seed) & _M32
    tail = start + (length // 4) * 4
    for at in range(start, tail, 4):
        h ^= _scramble32(_load(data, at, 4))
        h = _rotl32(h, 13)
        h = (h * _U(5) + _U(0xE6546B64)) & _M32
    if end > tail:
        h ^= _scramble32(_load(data, tail, end - tail))
    h ^= _U(length) & _M32
    return _fmix32(h)


@numba.njit(cache=True, nogil=True)
def murmur3_x64_128_low(data, start, end, seed):
    """First 64 bits of MurmurHash3_x64_128 of ``data[start:end]`` with ``seed``, as uint64."""
    length = end - start
    h1 = _U(seed) & _M32
    h2 = h1
    tail = start + (length // 16) * 16
    for at in range(start, tail, 16):
        k1 = _rotl64(_load(data, at, 8) * _C1_64, 31) * _C2_64
        h1 ^= k1
        h1 = (_rotl64(h1, 27) + h2) * _U(5) + _U(0x52DCE729)
        k2 = _rotl64(_load(data, at + 8, 8) * _C2_64, 33) * _C1_64
        h2 ^= k2
        h2 = (_rotl64(h2, 31) + h1) * _U(5) + _U(0x38495AB5)
    rest = end - tail
    if rest > 8:
        h2 ^= _rotl64(_load(data, tail + 8, rest - 8) * _C2_64, 33) * _C1_64
    if rest > 0:
        h1 ^= _rotl64(_load(data, tail, min(rest, 8)) * _C1_64, 31) * _C2_64
    h1 ^= _U(length)
    h2 ^= _U(length)
    h1 += h2
    h2 += h1
    h1 = fmix64(h1)
    h2 = fmix64(h2)
    return h1 + h2


@numba.njit(cache=True, nogil=True)
def _hash_column(data, offsets, first, home_seed, alt_seed, fingerprint_seed, out):
    for i in range(out.shape[0]):
        start = offsets[first + i]
        end = offsets[first + i + 1]
        out[i, 0] = np.int64(murmur3_32(data, start, end, home_seed))
        out[i, 1] = np.int64(murmur3_32(data, start, end, alt_seed))
        out[i, 2] = np.int64(murmur3_x64_128_low(data, start, end, fingerprint_seed))


def hash_utf8_column(
    data: np.ndarray, offsets: np.ndarray, first: int, count: int, seeds: tuple[int, int, int]
) -> np.ndarray:
    """Three hashes of each of ``count`` strings of an Arrow string column.

    Args:
        data: the column's UTF-8 bytes (uint8).
        offsets: its offsets (int32 or int64); string ``i`` is ``data[offsets[i]:offsets[i+1]]``.
        first: the column's first string (an Arrow array's ``offset``).
        count: how many strings.
        seeds: the seeds of the two 32-bit hashes and of the 64-bit one.

    Returns:
        int64 array of shape ``(count, 3)``: the two unsigned 32-bit hashes and
        the 64-bit hash read as a signed integer (``mmh3.hash64(...)[0]``).
    """
    out = np.empty((count, 3), dtype=np.int64)
    _hash_column(data, offsets, first, seeds[0], seeds[1], seeds[2], out)
    return out
