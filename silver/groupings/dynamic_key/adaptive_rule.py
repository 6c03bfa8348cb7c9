"""DYNAMIC_KEY's adaptive rule, compiled: sketch-detected hot keys, sized pools.

Per tuple: the key is counted in a decayed SpaceSaving summary. A cold key goes
to the least-loaded of its ``initial_pool`` ring candidates (with the adaptive
default of 1, its home worker: no split). Once per check interval after the
warm-up a key is re-examined: when its estimated share reaches
``theta = hot_share_factor / W`` it becomes hot and gets a pool; a hot key's pool
is grown to ``ceil(share * W * (1 + headroom))`` members, adding the currently
least-loaded workers, and by one more while even its least-loaded member is
above the mean load by more than ``overload_tolerance``. With ``relief =
relief_share_factor / W > 0`` a key with a share in ``[relief, theta)`` also
becomes hot, but only while its home worker is above the mean by more than
``overload_tolerance``; its pool then grows by the same two rules (usually by
one worker). A hot key whose share falls below ``theta / 2`` (``min(theta,
relief) / 2`` with relief on), or that the summary evicts, is cold again. Pools
never shrink while hot: a shrink would only split the key's state again later.

Which worker joins a pool: with ``least_loaded`` placement, the least-loaded
non-member. With ``hashed`` placement, among the non-members loaded at most
``placement_slack`` above the mean, the one the key ranks first by a
rendezvous hash of (key, worker); the least-loaded non-member only when all of
those are members. Independent splitters each see a share of the stream and
their loads differ in detail, so least-loaded choices differ between them and a
key ends up on the union of their pools; the key's own ranking makes them pick
the same workers. A pool is overloaded when its least-loaded member is above the
mean by more than ``overload_tolerance`` of the mean and by more than
``overload_share`` of the stream (the imbalance metric's own scale).
"""

from __future__ import annotations

import numba
import numpy as np

from silver.groupings._murmur3 import fmix64
from silver.groupings.space_saving import ss_decay, ss_offer

__all__ = ["rendezvous_score", "route_adaptive_rule"]

NEVER = np.int64(-(2**62))
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


@numba.njit(cache=True)
def _add_least_loaded(h, hot_size, hot_members, sent, below):
    """Add the least-loaded non-member to pool ``h`` if its load < ``below``."""
    workers = sent.shape[0]
    size = hot_size[h]
    best = -1
    for w in range(workers):
        member = False
        for j in range(size):
            if hot_members[h, j] == w:
                member = True
                break
        if not member and (best < 0 or sent[w] < sent[best]):
            best = w
    if best < 0 or sent[best] >= below:
        return False
    hot_members[h, size] = best
    hot_size[h] = size + 1
    return True


@numba.njit(cache=True)
def rendezvous_score(fingerprint, worker):
    """How much the key with ``fingerprint`` prefers ``worker`` (a uint64; higher first)."""
    return fmix64(np.uint64(fingerprint) ^ (np.uint64(worker + 1) * _GOLDEN))


@numba.njit(cache=True)
def _add_preferred(h, fp, hot_size, hot_members, sent, limit):
    """Add the non-member loaded at most ``limit`` that the key ranks first."""
    size = hot_size[h]
    best = -1
    best_score = np.uint64(0)
    for w in range(sent.shape[0]):
        if sent[w] > limit:
            continue
        member = False
        for j in range(size):
            if hot_members[h, j] == w:
                member = True
                break
        if member:
            continue
        score = rendezvous_score(fp, w)
        if best < 0 or score > best_score:
            best = w
            best_score = score
    if best < 0:
        return False
    hot_members[h, size] = best
    hot_size[h] = size + 1
    return True


@numba.njit(cache=True)
def _grow(h, fp, slack, hot_size, hot_members, sent, mean, below):
    """Add one member to pool ``h`` with a load below ``below``; ``slack`` < 0: least-loaded."""
    if slack >= 0.0 and _add_preferred(h, fp, hot_size, hot_members, sent,
                                       min(mean * (1.0 + slack), below - 1.0)):  # fmt: skip
        return True
    return _add_least_loaded(h, hot_size, hot_members, sent, below)


@numba.njit(cache=True)
def _pool_min(h, hot_size, hot_members, sent):
    best = hot_members[h, 0]
    for j in range(1, hot_size[h]):
        w = hot_members[h, j]
        if sent[w] < sent[best]:
            best = w
    return best


@numba.njit(cache=True)
def _make_hot(slot, home, initial_pool, sk_hot, hot_slot, hot_size, hot_members):
    for h in range(hot_slot.shape[0]):
        if hot_slot[h] < 0:
            workers = hot_members.shape[1]
            hot_slot[h] = slot
            size = min(initial_pool, workers)
            for j in range(size):
                hot_members[h, j] = (home + j) % workers
            hot_size[h] = size
            sk_hot[slot] = h
            return h
    return -1  # table full: stays cold until a hot key cools down


@numba.njit(cache=True)
def _release(slot, sk_hot, hot_slot, hot_size):
    h = sk_hot[slot]
    if h >= 0:
        hot_slot[h] = -1
        hot_size[h] = 0
        sk_hot[slot] = -1


@numba.njit(cache=True)
def _examine(slot, fp, home, share, f_params, initial_pool, sent, total,
             sk_hot, hot_slot, hot_size, hot_members):  # fmt: skip
    theta, headroom, relief, slack = f_params[0], f_params[1], f_params[4], f_params[5]
    workers = sent.shape[0]
    mean = total / workers
    # Overloaded: above the mean by both tolerances (f_params[6] is overload_share * W).
    tolerance = max(f_params[2], f_params[6])
    h = sk_hot[slot]
    if h < 0:
        # Below theta a key is split only to relieve its overloaded home (relief > 0).
        if share < theta and (relief <= 0.0 or share < relief
                              or sent[home] <= mean * (1.0 + tolerance)):  # fmt: skip
            return
        h = _make_hot(slot, home, initial_pool, sk_hot, hot_slot, hot_size, hot_members)
        if h < 0:
            return
    elif share < (min(theta, relief) if relief > 0.0 else theta) / 2.0:
        _release(slot, sk_hot, hot_slot, hot_size)
        return
    target = min(workers, int(np.ceil(share * workers * (1.0 + headroom))))
    while hot_size[h] < target and _grow(h, fp, slack, hot_size, hot_members, sent, mean, 2**62):
        pass
    if hot_size[h] < workers:
        floor = sent[_pool_min(h, hot_size, hot_members, sent)]
        if floor > mean * (1.0 + tolerance):
            _grow(h, fp, slack, hot_size, hot_members, sent, mean, floor)


@numba.njit(cache=True, nogil=True)
def route_adaptive_rule(fingerprints, homes, times, p_ints, f_params, clock, weighted, sent,
                        sk_fp, sk_counts, sk_errors, sk_heap, sk_heap_pos, sk_index,
                        sk_hot, sk_last_check, hot_slot, hot_size, hot_members):  # fmt: skip
    """Route a batch; ``clock`` = [start_ms, next_cycle_ms, cycle, total] and
    ``weighted`` = [decayed stream length] are mutated. ``f_params`` = [theta,
    headroom, overload_tolerance, decay, relief, placement_slack (< 0: least-loaded
    placement), overload_share * W]."""
    initial_pool, warm_up_ms, check_ms, cycle_ms = p_ints[0], p_ints[3], p_ints[4], p_ints[5]
    decay = f_params[3]
    workers = sent.shape[0]
    out = np.empty(times.shape[0], dtype=np.int32)
    for i in range(times.shape[0]):
        now = times[i]
        if clock[0] < 0:
            clock[0] = now
            clock[1] = now + cycle_ms
        while now >= clock[1]:
            clock[2] += 1
            clock[1] += cycle_ms
            ss_decay(decay, sk_counts, sk_errors)
            weighted[0] *= decay
        weighted[0] += 1.0
        slot, evicted = ss_offer(fingerprints[i], 1.0, sk_fp, sk_counts, sk_errors, sk_heap,
                                 sk_heap_pos, sk_index)  # fmt: skip
        if evicted >= 0:
            _release(evicted, sk_hot, hot_slot, hot_size)
            sk_last_check[evicted] = NEVER
        home = np.int64(homes[i] % workers)
        if now - clock[0] >= warm_up_ms and now - sk_last_check[slot] >= check_ms:
            sk_last_check[slot] = now
            share = sk_counts[slot] / weighted[0]
            _examine(slot, sk_fp[slot], home, share, f_params, initial_pool, sent, clock[3],
                     sk_hot, hot_slot, hot_size, hot_members)  # fmt: skip
        h = sk_hot[slot]
        if h >= 0:
            chosen = _pool_min(h, hot_size, hot_members, sent)
        else:
            chosen = home
            for j in range(1, min(initial_pool, workers)):
                w = (home + j) % workers
                if sent[w] < sent[chosen]:
                    chosen = w
        sent[chosen] += 1
        clock[3] += 1
        out[i] = chosen
    return out
