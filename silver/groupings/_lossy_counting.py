"""SMALOPS's compiled parts: lossy counting (Manku & Motwani) and the routing loop.

Lossy counting over one counting window: the window's tuples are cut into
buckets of width ``w = ceil(1 / epsilon)``; an entry is ``(fingerprint, count,
delta)``, a new key enters with ``delta = bucket - 1``, and at each bucket
boundary entries with ``count + delta <= bucket`` are pruned. A count is never
over-estimated and under-estimated by less than ``epsilon * N``.

The table is a fixed-capacity array set (part of the grouping state) with an
open-addressing index keyed by the 64-bit key fingerprint. Manku & Motwani bound
the entries by ``(1 / epsilon) * log(epsilon * N)``; :func:`table_capacity`
sizes for that at ``N = max_window_tuples`` plus two buckets of margin (one for
the fresh keys of the current bucket). Only a window longer than that can fill
the table; then a forced prune at the last completed bucket runs first (what a
late bucket boundary would have done), and if the table is still full the new
key is not counted (deterministic; its count may then fall short by more than
``epsilon * N``).
"""

from __future__ import annotations

import math

import numba

__all__ = ["bucket_width", "count_and_route", "index_length", "rebuild_index", "table_capacity"]


def bucket_width(epsilon: float) -> int:
    """Lossy counting's bucket width ``ceil(1 / epsilon)``."""
    return math.ceil(1.0 / epsilon)


def table_capacity(epsilon: float, max_window_tuples: int) -> int:
    """Entries needed for a window of up to ``max_window_tuples`` tuples."""
    width = bucket_width(epsilon)
    return width * (math.ceil(math.log(max(max_window_tuples / width, 1.0))) + 2)


def index_length(entries: int) -> int:
    """Power-of-two index length keeping the load factor at most 1/2."""
    return 1 << math.ceil(math.log2(max(entries, 1) * 2))


@numba.njit(cache=True, nogil=True)
def _find(fp, keys, index):
    # Fingerprints are murmur3 output: their low bits are already uniform.
    mask = index.shape[0] - 1
    i = fp & mask
    while True:
        slot = index[i]
        if slot < 0:
            return -1
        if keys[slot] == fp:
            return slot
        i = (i + 1) & mask


@numba.njit(cache=True, nogil=True)
def _index_insert(fp, slot, index):
    mask = index.shape[0] - 1
    i = fp & mask
    while index[i] >= 0:
        i = (i + 1) & mask
    index[i] = slot


@numba.njit(cache=True, nogil=True)
def rebuild_index(keys, size, index):
    """Index slots ``0 .. size-1`` of ``keys`` afresh."""
    index[:] = -1
    for slot in range(size):
        _index_insert(keys[slot], slot, index)


@numba.njit(cache=True, nogil=True)
def _prune(threshold, size, fps, counts, deltas, homes, alts, index):
    # Compacting in place keeps entry order (and so every later decision) stable.
    kept = 0
    for slot in range(size):
        if counts[slot] + deltas[slot] > threshold:
            if kept != slot:
                fps[kept] = fps[slot]
                counts[kept] = counts[slot]
                deltas[kept] = deltas[slot]
                homes[kept] = homes[slot]
                alts[kept] = alts[slot]
            kept += 1
    if kept != size:
        rebuild_index(fps, kept, index)
    return kept


@numba.njit(cache=True, nogil=True)
def _count(fp, home, alt, n, size, width, fps, counts, deltas, homes, alts, index):
    bucket = (n + width - 1) // width
    slot = _find(fp, fps, index)
    if slot >= 0:
        counts[slot] += 1
    else:
        if size == fps.shape[0]:
            size = _prune(bucket - 1, size, fps, counts, deltas, homes, alts, index)
        if size < fps.shape[0]:
            fps[size] = fp
            counts[size] = 1
            deltas[size] = bucket - 1
            homes[size] = home
            alts[size] = alt
            _index_insert(fp, size, index)
            size += 1
    if n % width == 0:
        size = _prune(bucket, size, fps, counts, deltas, homes, alts, index)
    return size


@numba.njit(cache=True, nogil=True)
def count_and_route(
    start, fingerprints, homes, alts, times, clock, n, size, width,
    lc_fp, lc_count, lc_delta, lc_home, lc_alt, lc_index,
    tracked, at_fp, at_worker, at_mset, at_index, untracked, workers, out_workers, out_sets,
):  # fmt: skip
    """Count and route tuples ``start ..`` until one crosses a window or decision boundary.

    ``clock`` is ``[window_ms, decision_ms, window, decision]``. Heavy keys in
    the assignment table (``at_*``) go to their worker with their message set;
    every other key to ``home % workers`` with the ``untracked`` message set.

    Returns:
        ``(stop, n, size)``: the first tuple not routed (it starts a new window or
        decision interval; ``len(times)`` if none), the window's tuple count and
        the lossy table's entry count.
    """
    for i in range(start, times.shape[0]):
        t = times[i]
        if t // clock[0] > clock[2] or t // clock[1] > clock[3]:
            return i, n, size
        fp = fingerprints[i]
        n += 1
        size = _count(fp, homes[i], alts[i], n, size, width,
                      lc_fp, lc_count, lc_delta, lc_home, lc_alt, lc_index)  # fmt: skip
        slot = _find(fp, at_fp, at_index) if tracked > 0 else -1
        if slot >= 0:
            out_workers[i] = at_worker[slot]
            out_sets[i] = at_mset[slot]
        else:
            out_workers[i] = homes[i] % workers
            out_sets[i] = untracked
    return times.shape[0], n, size
