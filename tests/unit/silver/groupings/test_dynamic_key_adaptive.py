"""DYNAMIC_KEY, adaptive mode: sketch-detected hot keys with pools sized to their share."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from silver.groupings.dynamic_key import DynamicKeyGrouping, DynamicKeyParams
from silver.groupings.hashing import hash_keys
from tests.unit.silver.groupings.conftest import zipf_stream


def _imbalance(routed: np.ndarray, workers: int) -> float:
    loads = np.bincount(routed, minlength=workers)
    return float((loads.max() - loads.mean()) / loads.sum())


def test_only_hot_keys_are_split_and_pools_follow_their_share():
    workers = 20
    keys, times, p = zipf_stream(200_000, exponent=1.4, keys=2000, seed=5)
    grouping = DynamicKeyGrouping(workers, DynamicKeyParams())
    routed = grouping.route(keys, times)
    spread = pd.DataFrame({"k": keys, "w": routed}).groupby("k")["w"].nunique()
    theta = grouping.params.hot_share_factor / workers
    cold = [f"key-{rank}" for rank in range(1, 2001) if p[rank - 1] < theta / 4]
    assert spread.reindex(cold).dropna().max() == 1  # cold keys never split
    hot = {h.key: h for h in grouping.hot_keys()}
    assert "key-1" in hot
    needed = math.ceil(p[0] * workers * (1 + grouping.params.headroom))
    assert hot["key-1"].pool_size >= needed
    assert spread["key-1"] == hot["key-1"].pool_size
    assert _imbalance(routed, workers) < 1e-3


def test_nothing_grows_before_warm_up():
    keys, times, _ = zipf_stream(20_000, exponent=2.0, keys=100, seed=1, rate=2000)
    params = DynamicKeyParams(warm_up_ms=5_000)
    grouping = DynamicKeyGrouping(10, params)
    early = times < params.warm_up_ms
    routed = grouping.route(keys, times)
    spread = pd.DataFrame({"k": keys[early], "w": routed[early]}).groupby("k")["w"].nunique()
    assert spread.max() == 1
    assert grouping.hot_keys()


def test_a_hot_key_that_cools_down_is_released():
    workers = 10
    n = 40_000
    times = (np.arange(6 * n) // 2).astype(np.int64)
    rng = np.random.default_rng(2)
    keys = np.array([f"k{i}" for i in rng.integers(0, 500, size=6 * n)], dtype=object)
    keys[:n][rng.random(n) < 0.5] = "burst"  # hot for 20 s, then gone
    grouping = DynamicKeyGrouping(workers, DynamicKeyParams())
    grouping.route(keys[:n], times[:n])
    assert "burst" in {h.key for h in grouping.hot_keys()}
    keys[n:][::5000] = "burst"  # rare for 100 s: its decayed share falls below theta / 2
    grouping.route(keys[n:], times[n:])
    assert "burst" not in {h.key for h in grouping.hot_keys()}
    fp = int(hash_keys(["burst"]).fingerprint[0])
    assert grouping.pool_of(fp) == ()


def _flat_head_stream(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """40 keys of 1.5 % each (below 0.25 / W at W=10), the rest over 3,000 rare keys."""
    rng = np.random.default_rng(seed)
    p = np.concatenate([np.full(40, 0.015), np.full(3000, 0.4 / 3000)])
    vocabulary = np.array([f"w{i}" for i in range(len(p))], dtype=object)
    return vocabulary[rng.choice(len(p), size=n, p=p / p.sum())], np.arange(n) // 2, p


def test_relief_splits_keys_below_the_hot_threshold_that_pin_an_overloaded_home():
    workers = 10
    keys, times, p = _flat_head_stream(400_000)
    old = DynamicKeyGrouping(workers, DynamicKeyParams(relief_share_factor=0))
    new = DynamicKeyGrouping(workers, DynamicKeyParams(relief_share_factor=0.1))
    routed_old, routed_new = old.route(keys, times), new.route(keys, times)
    # Without relief every head key stays on its home, so the loads are KEY's:
    # the hash placement of 40 equal keys over 10 workers.
    homes = hash_keys(keys).home % workers
    assert np.array_equal(np.bincount(routed_old, minlength=workers),
                          np.bincount(homes, minlength=workers))  # fmt: skip
    assert _imbalance(routed_old, workers) > 1e-2
    assert _imbalance(routed_new, workers) < 1e-3
    spread = pd.DataFrame({"k": keys, "w": routed_new}).groupby("k")["w"].nunique()
    rare = [f"w{i}" for i in range(40, len(p))]
    assert spread.reindex(rare).dropna().max() == 1  # below relief / W: never split
    assert 1 < spread.sum() / len(spread) < 1.1


def test_relief_zero_leaves_keys_below_the_hot_threshold_whole():
    workers = 10
    keys, times, _ = _flat_head_stream(100_000, seed=4)
    grouping = DynamicKeyGrouping(workers, DynamicKeyParams(relief_share_factor=0))
    routed = grouping.route(keys, times)
    assert pd.DataFrame({"k": keys, "w": routed}).groupby("k")["w"].nunique().max() == 1
