from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from silver.groupings.key import KeyGrouping
from silver.groupings.partial_key import PartialKeyGrouping, two_candidates
from silver.groupings.shuffle import ShuffleGrouping
from tests.reference_routings import route
from tests.unit.silver.groupings.conftest import zipf_stream


def _workers_per_key(keys: np.ndarray, routed: np.ndarray) -> pd.Series:
    return pd.DataFrame({"k": keys, "w": routed}).groupby("k")["w"].nunique()


def test_key_sends_every_tuple_of_a_key_to_one_worker(small_zipf, workers):
    keys, times = small_zipf
    routed = KeyGrouping(workers).route(keys, times)
    assert _workers_per_key(keys, routed).max() == 1


def test_shuffle_per_splitter_loads_differ_by_at_most_one(small_zipf, workers):
    keys, times = small_zipf
    routed = ShuffleGrouping(workers).route(keys, times)
    loads = np.bincount(routed, minlength=workers)
    assert loads.max() - loads.min() <= 1


def test_shuffle_round_robin_continues_across_batches():
    grouping = ShuffleGrouping(3)
    first = grouping.route(["a", "b"], [0, 1])
    second = grouping.route(["c", "d", "e"], [2, 3, 4])
    assert first.tolist() + second.tolist() == [0, 1, 2, 0, 1]


def test_partial_key_candidates_are_distinct(workers):
    rng = np.random.default_rng(5)
    home = rng.integers(0, 2**32, size=1000, dtype=np.uint32)
    alt = rng.integers(0, 2**32, size=1000, dtype=np.uint32)
    first, second = two_candidates(home, alt, workers)
    assert (first != second).all()
    assert ((0 <= second) & (second < workers)).all()


def test_partial_key_uses_at_most_two_workers_and_picks_the_less_loaded(workers):
    keys, times, _ = zipf_stream(20_000, keys=500, seed=11)
    grouping = PartialKeyGrouping(workers)
    routed = grouping.route(keys, times)
    assert _workers_per_key(keys, routed).max() <= 2
    # The less loaded candidate, ties to the first, as the per-tuple reference routes.
    expected = route("PARTIAL_KEY", workers, keys, times)
    assert routed.tolist() == expected
    assert grouping.state.sent.tolist() == np.bincount(expected, minlength=workers).tolist()


@pytest.mark.parametrize("grouping_type", [KeyGrouping, PartialKeyGrouping, ShuffleGrouping])
def test_empty_batch_routes_nothing(grouping_type):
    assert grouping_type(4).route([], []).tolist() == []
