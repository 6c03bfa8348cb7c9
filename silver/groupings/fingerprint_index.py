"""Open-addressing index from a 64-bit key fingerprint to a table slot (compiled).

The index is an int32 array whose length is a power of two, holding slots or -1.
Fingerprints are murmur3 output, so their low bits already spread well. Used by
every fixed-capacity key table (SpaceSaving, key spaces, lossy counting).
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["index_delete", "index_find", "index_insert", "index_rebuild", "index_size"]


def index_size(entries: int) -> int:
    """Index length for a table of ``entries`` slots (load factor <= 1/4)."""
    return 1 << int(np.ceil(np.log2(max(entries, 1) * 4)))


@numba.njit(cache=True)
def index_find(fp, fingerprints, index):
    """Slot whose fingerprint is ``fp``, or -1."""
    mask = index.shape[0] - 1
    i = int(fp & mask)
    while index[i] != -1:
        slot = index[i]
        if fingerprints[slot] == fp:
            return slot
        i = (i + 1) & mask
    return -1


@numba.njit(cache=True)
def index_insert(fp, slot, index):
    """Point ``fp`` at ``slot`` (``fp`` must not be indexed yet)."""
    mask = index.shape[0] - 1
    i = int(fp & mask)
    while index[i] != -1:
        i = (i + 1) & mask
    index[i] = slot


@numba.njit(cache=True)
def index_delete(fp, fingerprints, index):
    """Remove ``fp`` (linear probing with backward shift: no tombstones pile up)."""
    mask = index.shape[0] - 1
    i = int(fp & mask)
    while index[i] != -1 and fingerprints[index[i]] != fp:
        i = (i + 1) & mask
    if index[i] == -1:
        return
    j = i
    while True:
        j = (j + 1) & mask
        if index[j] == -1:
            break
        home = int(fingerprints[index[j]] & mask)
        # Move j back into the hole at i unless its home lies cyclically in (i, j].
        if (j > i and (home <= i or home > j)) or (j < i and home <= i and home > j):
            index[i] = index[j]
            i = j
    index[i] = -1


@numba.njit(cache=True)
def index_rebuild(fingerprints, used, index):
    """Re-index every slot with ``used[slot]`` true (after a bulk removal)."""
    index[:] = -1
    for slot in range(fingerprints.shape[0]):
        if used[slot]:
            index_insert(fingerprints[slot], slot, index)
