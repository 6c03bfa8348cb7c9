"""DYNAMIC_KEY, hashed placement: a hot key's pool grows with the workers the key ranks first."""

from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from silver.groupings.dynamic_key import DynamicKeyGrouping, DynamicKeyParams
from silver.groupings.dynamic_key.adaptive_rule import _grow, rendezvous_score
from tests.unit.silver.groupings.conftest import zipf_stream

_MASK = (1 << 64) - 1


def _score(fingerprint: int, worker: int) -> int:
    """The rendezvous score in plain integers: murmur3's fmix64 of fp ^ (w + 1) * phi."""
    k = (fingerprint & _MASK) ^ (((worker + 1) * 0x9E3779B97F4A7C15) & _MASK)
    k ^= k >> 33
    k = (k * 0xFF51AFD7ED558CCD) & _MASK
    k ^= k >> 33
    k = (k * 0xC4CEB9FE1A85EC53) & _MASK
    return k ^ (k >> 33)


def _expected_member(fp: int, members: set[int], sent: list[int], slack: float, below: int):
    """Which worker should join: the first-ranked non-member not overloaded, else the lightest."""
    workers = len(sent)
    mean = sum(sent) / workers
    limit = min(mean * (1 + slack), below - 1)
    eligible = [w for w in range(workers) if w not in members and sent[w] <= limit]
    if eligible:
        return max(eligible, key=lambda w: _score(fp, w))
    outside = [w for w in range(workers) if w not in members]
    lightest = min(outside, key=lambda w: (sent[w], w)) if outside else None
    return lightest if lightest is not None and sent[lightest] < below else None


@settings(max_examples=200, deadline=None)
@given(
    fp=st.integers(-(2**63), 2**63 - 1),
    sent=st.lists(st.integers(0, 50), min_size=2, max_size=24),
    data=st.data(),
    slack=st.sampled_from([0.0, 0.02, 0.5]),
)
def test_the_next_member_is_the_keys_first_ranked_worker_that_is_not_overloaded(
    fp, sent, data, slack
):
    workers = len(sent)
    members = data.draw(st.lists(st.integers(0, workers - 1), unique=True, max_size=workers))
    below = data.draw(st.sampled_from([2**62, *sent]))
    hot_size = np.array([len(members)], dtype=np.int32)
    hot_members = np.zeros((1, workers), dtype=np.int16)
    hot_members[0, : len(members)] = members
    loads = np.array(sent, dtype=np.int64)
    grew = _grow(0, np.int64(fp), slack, hot_size, hot_members, loads, loads.mean(), below)
    expected = _expected_member(fp, set(members), sent, slack, below)
    assert grew == (expected is not None)
    if grew:
        assert hot_size[0] == len(members) + 1
        assert hot_members[0, len(members)] == expected


@given(fp=st.integers(-(2**63), 2**63 - 1), worker=st.integers(0, 4095))
def test_rendezvous_score_is_murmur3_fmix64_of_key_and_worker(fp, worker):
    assert int(rendezvous_score(np.int64(fp), worker)) == _score(fp, worker)


def _shifting_stream(n: int, exponent: float, keys: int, interval_ms: int, seed: int):
    """A Zipf stream whose rank -> key mapping is re-drawn every ``interval_ms``."""
    ranks_keys, times, _ = zipf_stream(n, exponent=exponent, keys=keys, seed=seed)
    ranks = np.array([int(k[4:]) - 1 for k in ranks_keys])
    rng = np.random.default_rng(seed)
    interval = times // interval_ms
    permutations = np.stack([rng.permutation(keys) for _ in range(int(interval.max()) + 1)])
    vocabulary = np.array([f"k{i}" for i in range(keys)], dtype=object)
    return vocabulary[permutations[interval, ranks]], times


def _route_with_splitters(keys, times, workers: int, splitters: int, params: DynamicKeyParams):
    """Tuples dealt round-robin to independent splitters, in batches of 10,000."""
    groupings = [DynamicKeyGrouping(workers, params) for _ in range(splitters)]
    splitter = np.arange(len(keys)) % splitters
    routed = np.empty(len(keys), dtype=np.int32)
    for start in range(0, len(keys), 10_000):
        for index, grouping in enumerate(groupings):
            rows = start + np.flatnonzero(splitter[start : start + 10_000] == index)
            routed[rows] = grouping.route(keys[rows], times[rows])
    return routed, splitter


@pytest.mark.parametrize("workers", [20, 50])
def test_independent_splitters_grow_the_same_pools_for_a_moving_hot_set(workers):
    keys, times = _shifting_stream(300_000, exponent=2.0, keys=3000, interval_ms=20_000, seed=1)

    def spread(params):
        routed, splitter = _route_with_splitters(keys, times, workers, 4, params)
        frame = pd.DataFrame({"k": keys, "w": routed, "s": splitter})
        overall = frame.groupby("k")["w"].nunique()
        per_splitter = frame.groupby(["k", "s"])["w"].nunique().groupby("k").max()
        split = overall.index[overall > 1]
        return overall.mean(), overall[split].sum() / per_splitter[split].sum(), len(split)

    hashed_cost, hashed_union, hashed_split = spread(DynamicKeyParams())
    least_cost, least_union, _ = spread(DynamicKeyParams(placement="least_loaded"))
    assert hashed_split > 20  # the hot set moved: many keys were split in turn
    # Workers of a split key over all splitters / its largest pool in any one splitter.
    # 2026-11-28: 1.15 (W=20) and 1.22 (W=50); least-loaded 1.48 and 1.78. Only workers at or
    # below the mean may join (slack 0), a set the splitters see less alike than with the
    # earlier 2 % slack (1.05 and 1.12), which balanced to 7.5e-4 and 1.5e-3 here, not 1.5e-4.
    assert hashed_union < 1.25
    assert least_union > 1.3
    assert hashed_cost < least_cost


# sha256 (first 16 hex digits) of the routing of the stream below as the code at
# c550076 routed it, before hashed placement existed.
_RECORDED = {
    ((("relief_share_factor", 0.1),), 13): "bb5535ec738e62ba",
    ((("relief_share_factor", 0.1),), 50): "85ddd123b713c857",
    ((("relief_share_factor", 0.0),), 13): "e2720a6cd17b59ee",
    ((("relief_share_factor", 0.0),), 50): "93fe50341adf522f",
    ((("mode", "seed"),), 13): "1693b55bb1f3a436",
    ((("mode", "seed"),), 50): "b36f7779116a1eb4",
}


@pytest.mark.parametrize(("rule", "workers"), sorted(_RECORDED, key=str), ids=str)
def test_least_loaded_placement_and_the_seed_rule_route_exactly_as_before(rule, workers):
    keys, times = _shifting_stream(200_000, exponent=1.6, keys=2000, interval_ms=20_000, seed=3)
    params = dict(rule)
    if params.get("mode") != "seed":
        params["placement"] = "least_loaded"
    grouping = DynamicKeyGrouping(workers, DynamicKeyParams(**params))
    routed = np.concatenate([grouping.route(keys[start : start + 10_000], times[start : start + 10_000])
                             for start in range(0, len(keys), 10_000)])  # fmt: skip
    digest = hashlib.sha256(routed.astype("<i4").tobytes()).hexdigest()[:16]
    assert digest == _RECORDED[(rule, workers)]
