"""SpaceSaving heavy-hitter summary (Metwally et al.), compiled for the routing loop.

A fixed-capacity table of (fingerprint, count, error) with a min-heap over the
counts and an open-addressing index from fingerprint to slot. Each estimate
over-counts by at most ``total / capacity``, so a heavy threshold ``theta`` is
trustworthy only with ``capacity >= 1 / theta`` (we size it several times that).
Counts are float64 so the whole summary can be decayed (scaled) at once: a
uniform scale keeps the heap valid and the error bound relative.

All arrays live in :class:`SpaceSavingArrays` (plain numpy, part of a grouping's
serialized state); the functions are numba-compiled and mutate them in place.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np

from silver.groupings.fingerprint_index import index_delete, index_find, index_insert, index_size

__all__ = [
    "EMPTY",
    "SpaceSavingArrays",
    "capacity_for",
    "ss_decay",
    "ss_find",
    "ss_offer",
]

EMPTY = np.int64(-(2**63))  # fingerprint of an unused slot


def capacity_for(theta: float, error_ratio: float = 0.25, minimum: int = 16) -> int:
    """Slots needed so the estimate error stays below ``error_ratio * theta``."""
    return max(minimum, int(np.ceil(1.0 / (theta * error_ratio))))


@dataclass
class SpaceSavingArrays:
    """The summary's arrays (sized by :meth:`empty`)."""

    fingerprints: np.ndarray  # int64 [C]
    counts: np.ndarray  # float64 [C]
    errors: np.ndarray  # float64 [C]
    heap: np.ndarray  # int32 [C]: slots ordered as a min-heap on counts
    heap_pos: np.ndarray  # int32 [C]: slot -> index in heap
    index: np.ndarray  # int32 [T]: open addressing, slot or -1

    @classmethod
    def empty(cls, capacity: int) -> SpaceSavingArrays:
        table = index_size(capacity)
        return cls(
            fingerprints=np.full(capacity, EMPTY, dtype=np.int64),
            counts=np.zeros(capacity, dtype=np.float64),
            errors=np.zeros(capacity, dtype=np.float64),
            heap=np.arange(capacity, dtype=np.int32),
            heap_pos=np.arange(capacity, dtype=np.int32),
            index=np.full(table, -1, dtype=np.int32),
        )


@numba.njit(cache=True)
def ss_find(fp: np.int64, fingerprints: np.ndarray, index: np.ndarray) -> int:
    """Slot holding ``fp``, or -1."""
    return index_find(fp, fingerprints, index)


@numba.njit(cache=True)
def _sift_down(pos: int, counts: np.ndarray, heap: np.ndarray, heap_pos: np.ndarray) -> None:
    n = heap.shape[0]
    slot = heap[pos]
    value = counts[slot]
    while True:
        child = 2 * pos + 1
        if child >= n:
            break
        right = child + 1
        if right < n and counts[heap[right]] < counts[heap[child]]:
            child = right
        if counts[heap[child]] >= value:
            break
        heap[pos] = heap[child]
        heap_pos[heap[pos]] = pos
        pos = child
    heap[pos] = slot
    heap_pos[slot] = pos


@numba.njit(cache=True)
def ss_offer(
    fp: np.int64,
    weight: float,
    fingerprints: np.ndarray,
    counts: np.ndarray,
    errors: np.ndarray,
    heap: np.ndarray,
    heap_pos: np.ndarray,
    index: np.ndarray,
) -> tuple[int, int]:
    """Count ``weight`` occurrences of ``fp``.

    Returns:
        ``(slot, evicted)``: the key's slot, and the fingerprint's previous
        occupant's slot if a key was evicted to make room (else -1).
    """
    slot = ss_find(fp, fingerprints, index)
    evicted = -1
    if slot < 0:
        slot = heap[0]
        if fingerprints[slot] != EMPTY:
            index_delete(fingerprints[slot], fingerprints, index)
            evicted = slot
        errors[slot] = counts[slot]
        fingerprints[slot] = fp
        index_insert(fp, slot, index)
    counts[slot] += weight
    _sift_down(heap_pos[slot], counts, heap, heap_pos)
    return slot, evicted


@numba.njit(cache=True)
def ss_decay(factor: float, counts: np.ndarray, errors: np.ndarray) -> None:
    """Scale every count (a uniform scale keeps the heap valid)."""
    for i in range(counts.shape[0]):
        counts[i] *= factor
        errors[i] *= factor
