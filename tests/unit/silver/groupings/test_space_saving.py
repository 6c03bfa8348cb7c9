"""SpaceSaving summary: bounds, heap and index invariants, decay."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from silver.groupings.space_saving import (
    EMPTY,
    SpaceSavingArrays,
    capacity_for,
    ss_decay,
    ss_find,
    ss_offer,
)


def _offer_all(summary: SpaceSavingArrays, items) -> None:
    for fp in items:
        ss_offer(np.int64(fp), 1.0, summary.fingerprints, summary.counts, summary.errors,
                 summary.heap, summary.heap_pos, summary.index)  # fmt: skip


def _stream(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (rng.zipf(1.3, n) % 3000).astype(np.int64) * 1_000_003 + 17


@pytest.mark.parametrize("capacity", [8, 64, 300])
def test_estimates_bound_the_true_counts(capacity):
    items = _stream(30_000, seed=capacity)
    summary = SpaceSavingArrays.empty(capacity)
    _offer_all(summary, items)
    exact = Counter(items.tolist())
    for slot in range(capacity):
        fp = int(summary.fingerprints[slot])
        assert summary.counts[slot] >= exact[fp] >= summary.counts[slot] - summary.errors[slot]
        assert summary.errors[slot] <= len(items) / capacity
    # Every key above N / capacity is guaranteed to be tracked.
    for fp, count in exact.items():
        if count > len(items) / capacity:
            assert ss_find(np.int64(fp), summary.fingerprints, summary.index) >= 0


def test_heap_and_index_stay_consistent():
    summary = SpaceSavingArrays.empty(50)
    _offer_all(summary, _stream(20_000, seed=3))
    counts, heap = summary.counts, summary.heap
    for parent in range(50):
        for child in (2 * parent + 1, 2 * parent + 2):
            if child < 50:
                assert counts[heap[child]] >= counts[heap[parent]]
    assert sorted(heap.tolist()) == list(range(50))
    assert all(summary.heap_pos[heap[i]] == i for i in range(50))
    for slot in range(50):
        assert ss_find(summary.fingerprints[slot], summary.fingerprints, summary.index) == slot


def test_offer_reports_the_evicted_slot_only_when_full():
    summary = SpaceSavingArrays.empty(2)
    args = (summary.fingerprints, summary.counts, summary.errors, summary.heap, summary.heap_pos,
            summary.index)  # fmt: skip
    assert ss_offer(np.int64(1), 1.0, *args)[1] == -1
    assert ss_offer(np.int64(2), 1.0, *args)[1] == -1
    slot, evicted = ss_offer(np.int64(3), 1.0, *args)
    assert evicted == slot
    assert ss_find(np.int64(3), summary.fingerprints, summary.index) == slot
    assert EMPTY not in summary.fingerprints


def test_decay_scales_counts_and_errors():
    summary = SpaceSavingArrays.empty(4)
    _offer_all(summary, [5, 5, 5, 6])
    ss_decay(0.5, summary.counts, summary.errors)
    slot = ss_find(np.int64(5), summary.fingerprints, summary.index)
    assert summary.counts[slot] == pytest.approx(1.5)


def test_capacity_keeps_error_below_the_threshold():
    assert capacity_for(0.01, 0.25) == 400
    assert capacity_for(0.5, 0.25, minimum=16) == 16
