"""Seed 000's DYNAMIC_KEY rule, compiled: key spaces, consecutive pools.

Per tuple: the key is counted in its key space (new keys enter the baby space,
evicting its least frequent key when full); its candidates are the ring slice
``home .. home + pool - 1`` (pool = ``initial_pool`` unless the key is old); it
goes to the least-loaded candidate. An old key is re-examined once per check
interval after the warm-up: it grows by the next worker in the ring when even
its least-loaded candidate is above ``loadToScaleUp`` and that worker is less
loaded than every candidate; it shrinks by one when at least two candidates are
below ``loadToScaleDown``. Loads are real-valued percentages (the reference code
truncates them to integers, which makes ties everywhere once W >= 50).

Every ``key_space_cycle_ms`` of event time the spaces are re-sorted by frequency:
the most frequent baby keys move up to the teenage space, and every
``teen_to_old_every``-th cycle the most frequent teenagers move up to the old
space (a full space swaps its least frequent member down). Teenage and old keys
unseen for ``gc_after_ms`` are evicted.
"""

from __future__ import annotations

import numba
import numpy as np

from silver.groupings.fingerprint_index import index_find, index_insert, index_rebuild
from silver.groupings.space_saving import EMPTY

__all__ = ["BABY", "FREE", "OLD", "TEEN", "route_seed_rule"]

FREE, BABY, TEEN, OLD = -1, 0, 1, 2


@numba.njit(cache=True)
def _admit(fp, now, caps, ks_fp, ks_count, ks_space, ks_last_seen, index):
    """Slot for a key not in any space: a free slot, or the baby space's least frequent."""
    baby_count = 0
    victim = -1
    for slot in range(ks_fp.shape[0]):
        if ks_space[slot] == BABY:
            baby_count += 1
            if victim < 0 or ks_count[slot] < ks_count[victim]:
                victim = slot
    if baby_count < caps[BABY]:
        for slot in range(ks_fp.shape[0]):
            if ks_space[slot] == FREE:
                victim = slot
                break
    evict = ks_space[victim] != FREE
    ks_fp[victim] = fp
    ks_count[victim] = 0.0
    ks_space[victim] = BABY
    ks_last_seen[victim] = now
    if evict:
        index_rebuild(ks_fp, ks_space != FREE, index)
    else:
        index_insert(fp, victim, index)
    return victim


@numba.njit(cache=True)
def _promote(lower, caps, now, initial_pool, ks_count, ks_space, ks_pool, ks_last_check):
    """Move the most frequent keys of space ``lower`` up one space."""
    upper = lower + 1
    order = np.argsort(-ks_count, kind="mergesort")
    for slot in order:
        if ks_space[slot] != lower:
            continue
        members = 0
        weakest = -1
        for other in range(ks_space.shape[0]):
            if ks_space[other] == upper:
                members += 1
                if weakest < 0 or ks_count[other] < ks_count[weakest]:
                    weakest = other
        if members >= caps[upper]:
            if ks_count[slot] <= ks_count[weakest]:
                break  # sorted: no later key is more frequent either
            ks_space[weakest] = lower
        ks_space[slot] = upper
        if upper == OLD:
            ks_pool[slot] = initial_pool
            ks_last_check[slot] = now  # the check interval starts at promotion


@numba.njit(cache=True)
def _run_cycle(cycle, now, p_ints, caps, ks_fp, ks_count, ks_space, ks_last_seen, ks_pool,
               ks_last_check, index):  # fmt: skip
    initial_pool, teen_to_old_every, gc_after_ms = p_ints[0], p_ints[1], p_ints[2]
    _promote(BABY, caps, now, initial_pool, ks_count, ks_space, ks_pool, ks_last_check)
    if cycle % teen_to_old_every == 0:
        _promote(TEEN, caps, now, initial_pool, ks_count, ks_space, ks_pool, ks_last_check)
    evicted = False
    for slot in range(ks_fp.shape[0]):
        if ks_space[slot] >= TEEN and now - ks_last_seen[slot] > gc_after_ms:
            ks_space[slot] = FREE
            ks_fp[slot] = EMPTY
            evicted = True
    if evicted:
        index_rebuild(ks_fp, ks_space != FREE, index)


@numba.njit(cache=True)
def _least_loaded(home, pool, workers, sent):
    best = home % workers
    for j in range(1, pool):
        w = (home + j) % workers
        if sent[w] < sent[best]:
            best = w
    return best


@numba.njit(cache=True)
def _check_scaling(home, pool, workers, sent, total, initial_pool):
    """New pool size of an old key (seed 000's scale-up / scale-down rule)."""
    ideal = 100.0 / workers
    up = ideal + np.sqrt(ideal)
    down = ideal - np.sqrt(ideal)
    scale = 100.0 / total
    min_load = 1e300
    below = 0
    for j in range(pool):
        load = sent[(home + j) % workers] * scale
        min_load = min(min_load, load)
        if load < down:
            below += 1
    if min_load > up and pool < workers:
        if sent[(home + pool) % workers] * scale < min_load:
            return pool + 1
    elif pool > initial_pool and below >= 2:
        return pool - 1
    return pool


@numba.njit(cache=True, nogil=True)
def route_seed_rule(fingerprints, homes, times, p_ints, caps, clock, sent,
                    ks_fp, ks_count, ks_space, ks_last_seen, ks_pool, ks_last_check, index):  # fmt: skip
    """Route a batch; ``clock`` = [start_ms, next_cycle_ms, cycle, total] (mutated)."""
    initial_pool, warm_up_ms, check_ms, cycle_ms = p_ints[0], p_ints[3], p_ints[4], p_ints[5]
    workers = sent.shape[0]
    out = np.empty(times.shape[0], dtype=np.int32)
    for i in range(times.shape[0]):
        now = times[i]
        if clock[0] < 0:
            clock[0] = now
            clock[1] = now + cycle_ms
        while now >= clock[1]:
            clock[2] += 1
            _run_cycle(clock[2], clock[1], p_ints, caps, ks_fp, ks_count, ks_space,
                       ks_last_seen, ks_pool, ks_last_check, index)  # fmt: skip
            clock[1] += cycle_ms
        fp = fingerprints[i]
        slot = index_find(fp, ks_fp, index)
        if slot < 0:
            slot = _admit(fp, now, caps, ks_fp, ks_count, ks_space, ks_last_seen, index)
        ks_count[slot] += 1.0
        ks_last_seen[slot] = now
        home = np.int64(homes[i] % workers)
        pool = initial_pool
        if ks_space[slot] == OLD:
            if (now - clock[0] >= warm_up_ms and now - ks_last_check[slot] >= check_ms
                    and clock[3] > 0):  # fmt: skip
                ks_last_check[slot] = now
                ks_pool[slot] = _check_scaling(home, ks_pool[slot], workers, sent, clock[3],
                                               initial_pool)  # fmt: skip
            pool = ks_pool[slot]
        chosen = _least_loaded(home, min(pool, workers), workers, sent)
        sent[chosen] += 1
        clock[3] += 1
        out[i] = chosen
    return out
