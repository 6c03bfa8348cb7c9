"""DYNAMIC_KEY state: one dataclass for both modes (the other mode's arrays are empty)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from silver.groupings.dynamic_key.params import DynamicKeyParams
from silver.groupings.dynamic_key.seed_rule import FREE
from silver.groupings.fingerprint_index import index_size
from silver.groupings.space_saving import EMPTY, SpaceSavingArrays, capacity_for

__all__ = ["DynamicKeyState", "initial_dynamic_key_state"]


@dataclass
class DynamicKeyState:
    """Everything DYNAMIC_KEY needs to resume routing.

    ``clock`` is ``[start_ms, next_cycle_ms, cycle, total]`` (start -1 before the
    first tuple). ``ks_*`` are the seed mode's key spaces (slot space: -1 free,
    0 baby, 1 teenage, 2 old); ``sk_*`` the adaptive mode's summary and
    ``hot_*`` its pools. ``name_fps``/``names`` remember the names of the keys
    that are old or hot, for reporting.
    """

    workers: int
    sent: np.ndarray
    clock: np.ndarray
    weighted: np.ndarray
    ks_fp: np.ndarray
    ks_count: np.ndarray
    ks_space: np.ndarray
    ks_last_seen: np.ndarray
    ks_pool: np.ndarray
    ks_last_check: np.ndarray
    ks_index: np.ndarray
    sk_fp: np.ndarray
    sk_counts: np.ndarray
    sk_errors: np.ndarray
    sk_heap: np.ndarray
    sk_heap_pos: np.ndarray
    sk_index: np.ndarray
    sk_hot: np.ndarray
    sk_last_check: np.ndarray
    hot_slot: np.ndarray
    hot_size: np.ndarray
    hot_members: np.ndarray
    name_fps: np.ndarray
    names: np.ndarray


def initial_dynamic_key_state(workers: int, params: DynamicKeyParams) -> DynamicKeyState:
    """Empty state sized for ``workers`` and the mode in ``params``."""
    seed = params.mode == "seed"
    keys = params.distinct_key_count if seed else 0
    theta = params.tracked_share_factor() / workers
    capacity = 0 if seed else capacity_for(theta, params.error_ratio)
    hot = 0 if seed else int(np.ceil(4.0 / (3.0 * theta))) + 1
    sketch = SpaceSavingArrays.empty(max(capacity, 1))
    if seed:
        sketch = SpaceSavingArrays(*(a[:0] for a in vars(sketch).values()))
    return DynamicKeyState(
        workers=workers,
        sent=np.zeros(workers, dtype=np.int64),
        clock=np.array([-1, 0, 0, 0], dtype=np.int64),
        weighted=np.zeros(1, dtype=np.float64),
        ks_fp=np.full(keys, EMPTY, dtype=np.int64),
        ks_count=np.zeros(keys, dtype=np.float64),
        ks_space=np.full(keys, FREE, dtype=np.int8),
        ks_last_seen=np.zeros(keys, dtype=np.int64),
        ks_pool=np.zeros(keys, dtype=np.int32),
        ks_last_check=np.zeros(keys, dtype=np.int64),
        ks_index=np.full(index_size(keys) if seed else 0, -1, dtype=np.int32),
        sk_fp=sketch.fingerprints,
        sk_counts=sketch.counts,
        sk_errors=sketch.errors,
        sk_heap=sketch.heap,
        sk_heap_pos=sketch.heap_pos,
        sk_index=sketch.index,
        sk_hot=np.full(capacity, -1, dtype=np.int32),
        sk_last_check=np.full(capacity, -(2**62), dtype=np.int64),
        hot_slot=np.full(hot, -1, dtype=np.int32),
        hot_size=np.zeros(hot, dtype=np.int32),
        hot_members=np.zeros((hot, workers), dtype=np.int16),
        name_fps=np.zeros(0, dtype=np.int64),
        names=np.zeros(0, dtype="<U1"),
    )
