"""CONSISTENT_HASH (seed 002): ring lookup, the Qmax > Qs(1+tau) trigger, halving, doubling."""

from __future__ import annotations

import mmh3
import numpy as np
import pytest
from pydantic import ValidationError

from silver.groupings._ring import build_ring
from silver.groupings.consistent_hash import ConsistentHashGrouping, ConsistentHashParams
from silver.groupings.hashing import hash_keys
from tests.unit.silver.groupings.conftest import zipf_stream


def _brute_force_owner(tokens: list[int], key_position: int) -> int:
    """Walk the ring clockwise from the key: first token at or after it, else wrap."""
    ring = sorted(
        (mmh3.hash(f"token-{w}-{j}", 0, signed=False), w, j)
        for w, count in enumerate(tokens)
        for j in range(count)
    )
    for position, worker, _ in ring:
        if position >= key_position:
            return worker
    return ring[0][1]


def _close_with(grouping: ConsistentHashGrouping, loads: list[int]) -> list[int]:
    """End an interval whose per-worker loads were ``loads``; tokens afterwards."""
    grouping.state.counts[:] = loads
    grouping._close_interval()
    return grouping.tokens_per_worker().tolist()


def _keys_on(grouping: ConsistentHashGrouping, count: int = 400) -> dict[int, str]:
    """One key name per worker, for the current ring."""
    names = [f"probe-{i}" for i in range(count)]
    owners = grouping.ring().lookup(hash_keys(names).home)
    found: dict[int, str] = {}
    for name, owner in zip(names, owners.tolist(), strict=True):
        found.setdefault(owner, name)
    assert len(found) == grouping.workers
    return found


@pytest.mark.parametrize("tokens", [[1, 1, 1], [8, 8, 8, 8], [1, 4, 2, 16, 1], [3, 1]])
def test_lookup_equals_a_brute_force_clockwise_walk(tokens):
    ring = build_ring(tuple(tokens), 16)
    token_positions = [mmh3.hash(f"token-{w}-{j}", 0, signed=False)
                       for w, c in enumerate(tokens) for j in range(c)]  # fmt: skip
    edges = [0, 2**32 - 1, *token_positions, *(p + 1 for p in token_positions if p < 2**32 - 1)]
    positions = np.concatenate([hash_keys([f"k{i}" for i in range(500)]).home,
                                np.array(edges, dtype=np.uint32)])  # fmt: skip
    expected = [_brute_force_owner(tokens, int(p)) for p in positions]
    assert ring.lookup(positions).tolist() == expected


def test_redistributes_only_strictly_above_the_threshold():
    grouping = ConsistentHashGrouping(3, ConsistentHashParams(strategy="doubling", tau=0.2))
    assert _close_with(grouping, [120, 100, 5]) == [1, 1, 1]  # 120 == 100 * 1.2: no change
    assert _close_with(grouping, [121, 100, 5]) == [1, 2, 2]  # just above
    assert _close_with(grouping, [7, 7, 7]) == [1, 2, 2]
    assert _close_with(grouping, [0, 0, 0]) == [1, 2, 2]
    assert grouping.rounds_per_worker().tolist() == [1, 0, 0]


def test_threshold_through_routing_at_interval_boundaries():
    grouping = ConsistentHashGrouping(3, ConsistentHashParams(tau=0.25, check_interval_ms=1000))
    on = _keys_on(grouping)

    def interval(loads: list[int], start_ms: int) -> tuple[list[str], list[int]]:
        keys = [on[w] for w, n in enumerate(loads) for _ in range(n)]
        return keys, [start_ms + i % 1000 for i in range(len(keys))]

    keys, times = interval([125, 100, 3], 0)  # 125 == 100 * 1.25: exactly at the threshold
    grouping.route(keys, times)
    grouping.route([on[2]], [1000])  # crossing into interval 1 closes interval 0
    assert grouping.tokens_per_worker().tolist() == [1, 1, 1]
    keys, times = interval([126, 100, 2], 1000)  # with the tuple above: [126, 100, 3]
    grouping.route(keys, times)
    grouping.route([on[2]], [5000])  # a gap: interval 1 closes once, 2..4 were empty
    assert grouping.tokens_per_worker().tolist() == [1, 2, 2]
    assert grouping.state.counts.sum() == 1


def test_halving_halves_the_busiest_and_never_goes_below_one_token():
    params = ConsistentHashParams(strategy="halving", initial_tokens=16, max_rounds=100)
    grouping = ConsistentHashGrouping(3, params)
    history = [_close_with(grouping, [100, 10, 1]) for _ in range(8)]
    assert [h[0] for h in history] == [8, 4, 2, 1, 1, 1, 1, 1]  # then "out of halving"
    assert all(h[1:] == [16, 16] for h in history)
    assert grouping.rounds_per_worker().tolist() == [8, 0, 0]


def test_halving_driven_by_a_skewed_stream_keeps_every_worker_on_the_ring():
    params = ConsistentHashParams(strategy="halving", initial_tokens=8, max_rounds=1000,
                                  check_interval_ms=100)  # fmt: skip
    grouping = ConsistentHashGrouping(6, params)
    keys, times, _ = zipf_stream(60_000, exponent=1.6, keys=500, seed=5, rate=2000)
    previous = grouping.tokens_per_worker()
    for start in range(0, len(keys), 200):  # one 100 ms interval per batch at 2000 tuples/s
        grouping.route(keys[start : start + 200], times[start : start + 200])
        tokens = grouping.tokens_per_worker()
        changed = np.flatnonzero(tokens != previous)
        assert len(changed) <= 1
        if len(changed):
            assert tokens[changed[0]] == previous[changed[0]] // 2
        assert tokens.min() >= 1 and np.all(tokens <= previous)
        previous = tokens
    assert grouping.rounds_per_worker().sum() > 10
    assert grouping.tokens_per_worker().min() == 1


def test_doubling_doubles_every_worker_but_the_busiest():
    grouping = ConsistentHashGrouping(4, ConsistentHashParams(strategy="doubling", max_rounds=50))
    assert grouping.tokens_per_worker().tolist() == [1, 1, 1, 1]
    assert _close_with(grouping, [9, 50, 3, 3]) == [2, 1, 2, 2]
    assert _close_with(grouping, [9, 3, 3, 50]) == [4, 2, 4, 2]
    assert _close_with(grouping, [50, 3, 3, 3]) == [4, 4, 8, 4]


def test_doubling_is_capped_per_worker():
    params = ConsistentHashParams(strategy="doubling", max_tokens_per_worker=8, max_rounds=50)
    grouping = ConsistentHashGrouping(2, params)
    history = [_close_with(grouping, [10, 1]) for _ in range(5)]
    assert [h[1] for h in history] == [2, 4, 8, 8, 8]
    assert all(h[0] == 1 for h in history)
    assert len(grouping.ring().positions) == 9


@pytest.mark.parametrize("strategy", ["halving", "doubling"])
def test_max_rounds_limits_redistributions_per_worker(strategy):
    params = ConsistentHashParams(strategy=strategy, max_rounds=2, initial_tokens=64)
    grouping = ConsistentHashGrouping(3, params)
    for _ in range(5):
        _close_with(grouping, [100, 1, 1])
    tokens = grouping.tokens_per_worker().tolist()
    assert tokens == ([16, 64, 64] if strategy == "halving" else [1, 4, 4])
    assert _close_with(grouping, [1, 100, 1]) == ([16, 32, 64] if strategy == "halving" else [2, 4, 8])
    assert grouping.rounds_per_worker().tolist() == [2, 1, 0]


def test_without_redistribution_a_key_always_maps_to_the_same_worker(workers):
    grouping = ConsistentHashGrouping(workers, ConsistentHashParams(tau=1e9))
    keys, times, _ = zipf_stream(20_000, keys=300, seed=2)
    routed = grouping.route(keys, times)
    assert grouping.rounds_per_worker().sum() == 0
    first = {}
    for key, worker in zip(keys.tolist(), routed.tolist(), strict=True):
        assert first.setdefault(key, worker) == worker


@pytest.mark.parametrize("strategy", ["halving", "doubling"])
@pytest.mark.parametrize("batch", [1, 7, 1000, 4999])
def test_batch_splits_and_restores_route_like_one_uninterrupted_run(strategy, batch):
    params = ConsistentHashParams(strategy=strategy, check_interval_ms=250, max_rounds=4)
    keys, times, _ = zipf_stream(12_000, exponent=1.4, keys=800, seed=11, rate=2000)
    whole = ConsistentHashGrouping(9, params)
    expected = whole.route(keys, times)
    assert whole.rounds_per_worker().sum() > 0
    grouping, pieces = ConsistentHashGrouping(9, params), []
    for start in range(0, len(keys), batch):
        pieces.append(grouping.route(keys[start : start + batch], times[start : start + batch]))
        if (start // batch) % 3 == 0:
            grouping = ConsistentHashGrouping.restore(9, params, grouping.snapshot())
    assert np.array_equal(np.concatenate(pieces), expected)
    assert np.array_equal(grouping.tokens_per_worker(), whole.tokens_per_worker())


def test_out_of_order_tuples_stay_in_the_current_interval():
    grouping = ConsistentHashGrouping(3, ConsistentHashParams(check_interval_ms=1000))
    grouping.route(["a", "b"], [2500, 100])
    assert grouping.state.interval == 2
    assert grouping.state.counts.sum() == 2


@pytest.mark.parametrize(
    "bad",
    [{"initial_tokens": 6}, {"max_tokens_per_worker": 1000}, {"tau": -0.1},
     {"check_interval_ms": 0}, {"strategy": "tripling"},
     {"initial_tokens": 64, "max_tokens_per_worker": 32}],
)  # fmt: skip
def test_invalid_parameters_are_refused(bad):
    with pytest.raises(ValidationError):
        ConsistentHashParams(**bad)
