"""DYNAMIC_KEY, seed mode: seed 000's rule as written (real-valued loads)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from silver.groupings.dynamic_key import DynamicKeyGrouping, DynamicKeyParams
from silver.groupings.dynamic_key.seed_rule import _check_scaling
from silver.groupings.hashing import hash_keys, stable_hash

W = 10
SECOND = 1000


def _hot_stream(seconds: int, per_second: int, hot_share: float, seed: int = 1):
    """One key 'hot' at ``hot_share`` of the tuples, the rest uniform over 200 keys."""
    rng = np.random.default_rng(seed)
    n = seconds * per_second
    cold = np.array([f"cold-{i}" for i in range(200)], dtype=object)
    keys = cold[rng.integers(0, 200, size=n)]
    keys[rng.random(n) < hot_share] = "hot"
    times = (np.arange(n) * SECOND // per_second).astype(np.int64)
    return keys, times


def _pool_history(grouping, keys, times, per_second):
    fp = int(hash_keys(["hot"]).fingerprint[0])
    history = []
    for start in range(0, len(keys), per_second):
        grouping.route(keys[start : start + per_second], times[start : start + per_second])
        history.append((int(times[start]) + SECOND, grouping.pool_of(fp)))
    return history


def test_pool_grows_only_after_promotion_to_old_warm_up_and_check_interval():
    params = DynamicKeyParams(mode="seed")
    keys, times = _hot_stream(seconds=400, per_second=100, hot_share=0.5)
    history = _pool_history(DynamicKeyGrouping(W, params), keys, times, 100)
    old_since = min(t for t, pool in history if pool)
    # Promoted at the 4th key-space cycle: 4 x 15 s after the first tuple (batches are 1 s).
    assert 4 * params.key_space_cycle_ms < old_since <= 4 * params.key_space_cycle_ms + SECOND
    sizes = [(t, len(pool)) for t, pool in history if pool]
    growths = [t for (t, size), (_, before) in zip(sizes[1:], sizes[:-1], strict=True) if size > before]
    assert growths, "a 50 % key on 10 workers must outgrow two candidates"
    assert growths[0] >= old_since + params.check_interval_ms
    assert all(b - a >= params.check_interval_ms for a, b in itertools.pairwise(growths))
    assert all(size - before <= 1 for (_, size), (_, before) in zip(sizes[1:], sizes[:-1], strict=True))
    home = stable_hash("hot") % W
    final = history[-1][1]
    assert final == tuple((home + j) % W for j in range(len(final)))  # consecutive ring slice


def test_no_growth_before_warm_up_even_for_an_old_key():
    params = DynamicKeyParams(mode="seed", key_space_cycle_ms=1000, teen_to_old_every=1,
                              warm_up_ms=100_000, check_interval_ms=1000)  # fmt: skip
    keys, times = _hot_stream(seconds=150, per_second=100, hot_share=0.6)
    history = _pool_history(DynamicKeyGrouping(W, params), keys, times, 100)
    early = [len(pool) for t, pool in history if t <= params.warm_up_ms]
    late = [len(pool) for t, pool in history if t > params.warm_up_ms + 2000]
    assert early and max(early) == 2
    assert max(late) > 2


def test_teenage_keys_never_grow():
    params = DynamicKeyParams(mode="seed", teen_to_old_every=1000)
    keys, times = _hot_stream(seconds=300, per_second=100, hot_share=0.6)
    grouping = DynamicKeyGrouping(W, params)
    routed = grouping.route(keys, times)
    assert grouping.key_spaces()["old"] == []
    assert "hot" in grouping.key_spaces()["teenage"]
    assert len(set(routed[keys == "hot"].tolist())) <= 2


def test_pool_shrinks_when_the_keys_load_falls():
    params = DynamicKeyParams(mode="seed")
    keys, times = _hot_stream(seconds=400, per_second=100, hot_share=0.5)
    grouping = DynamicKeyGrouping(W, params)
    grouping.route(keys, times)
    fp = int(hash_keys(["hot"]).fingerprint[0])
    grown = grouping.pool_of(fp)
    assert len(grown) >= 3
    # Then traffic moves to keys whose two candidates avoid the pool: its workers' loads fall.
    avoid = [f"other-{i}" for i in range(5000)
             if not {stable_hash(f"other-{i}") % W, (stable_hash(f"other-{i}") + 1) % W} & set(grown)][:40]  # fmt: skip
    start = int(times[-1]) + 10
    n = 300_000
    other = np.array(avoid, dtype=object)[np.arange(n) % len(avoid)]
    other[::1000] = "hot"  # still seen, so still old, but now a light key
    later = start + (np.arange(n) * SECOND // 1000).astype(np.int64)
    grouping.route(other, later)
    assert len(grouping.pool_of(fp)) < len(grown)
    assert len(grouping.pool_of(fp)) >= params.initial_pool


@pytest.mark.parametrize(
    ("sent", "pool", "expected"),
    [
        # ideal 10 %, up 13.16 %, down 6.84 %; home 0.
        ([20, 20, 5, 5, 10, 10, 10, 10, 5, 5], 2, 3),   # both candidates above up, next lighter
        ([20, 20, 25, 5, 10, 10, 0, 5, 5, 0], 2, 2),    # next worker is not lighter: no growth
        ([12, 12, 5, 5, 10, 10, 10, 10, 16, 10], 2, 2),  # below up: no growth
        ([5, 5, 5, 30, 10, 10, 10, 10, 10, 5], 4, 3),   # three candidates below down: shrink
        ([5, 5, 30, 30, 10, 10, 0, 0, 5, 5], 2, 2),     # never below the initial pool
        ([5, 30, 30, 30, 0, 0, 0, 0, 0, 5], 4, 4),      # one below down is not enough
    ],
)  # fmt: skip
def test_scaling_rule(sent, pool, expected):
    sent = np.array(sent, dtype=np.int64)
    assert _check_scaling(0, pool, W, sent, int(sent.sum()), 2) == expected
