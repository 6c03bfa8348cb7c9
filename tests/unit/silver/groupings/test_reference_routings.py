"""Every grouping routes tuple for tuple as its per-tuple reference (``tests.reference_routings``).

The references are plain Python loops written from the seeds and the documented
choices; production routes the same stream in uneven batches, so its state also
has to carry across batch ends. Streams: two Zipf streams (a steep head over few
keys, a flat one over many), a hot set that drifts every 10 s, and one hot key
among uniform ones: 3,000 tuples at 25 per second of event time with a 30 s gap
half way (150 s: long enough for seed 000's 60 s promotions and checks) and one
tuple in 50 up to 1.5 s late. Each W in 2, 7 and 50 (the ``workers`` fixture).
"""

from __future__ import annotations

import itertools
from functools import cache

import numpy as np
import pandas as pd
import pytest

from silver.groupings.registry import GROUPING_NAMES, make_grouping
from silver.groupings.smalops import SmalopsGrouping, SmalopsParams
from tests.reference_routings import REFERENCES, route
from tests.reference_routings import smalops as smalops_reference
from tests.unit.silver.groupings.conftest import zipf_stream

N = 3000
RATE = 25.0
CUTS = (1, 700, 2101, 2999)  # production's batches: [0, 1), [1, 700), ..., [2999, N)

VARIANTS = [
    ("SHUFFLE", {}),
    ("KEY", {}),
    ("PARTIAL_KEY", {}),
    ("W_CHOICES", {}),
    ("W_CHOICES", {"heavy_threshold_factor": 0.5, "error_ratio": 0.5, "min_heavy_count": 3}),
    ("CONSISTENT_HASH", {}),
    ("CONSISTENT_HASH", {"strategy": "halving"}),
    ("CONSISTENT_HASH", {"initial_tokens": 4, "max_tokens_per_worker": 4, "max_rounds": 30,
                         "check_interval_ms": 400}),
    ("SMALOPS", {}),
    ("SMALOPS", {"counting_window_ms": 8000, "decision_interval_ms": 5000, "support": 0.04,
                 "epsilon": 0.04}),
    ("DYNAMIC_KEY", {}),
    ("DYNAMIC_KEY", {"placement": "least_loaded"}),
    ("DYNAMIC_KEY", {"relief_share_factor": 0.0, "decay": 0.8, "error_ratio": 1.0}),
    ("DYNAMIC_KEY", {"mode": "seed"}),
    ("DYNAMIC_KEY", {"mode": "seed", "key_space_cycle_ms": 2000, "teen_to_old_every": 2,
                     "warm_up_ms": 3000, "check_interval_ms": 2500, "distinct_key_count": 30,
                     "gc_after_ms": 8000}),
]  # fmt: skip


def _irregular(times: np.ndarray, seed: int) -> np.ndarray:
    """A 30 s gap half way, and one tuple in 50 up to 1.5 s late."""
    rng = np.random.default_rng(seed)
    times = times + np.where(np.arange(len(times)) >= len(times) // 2, 30_000, 0)
    late = rng.random(len(times)) < 0.02
    return np.where(late, np.maximum(times - rng.integers(0, 1500, len(times)), 0), times)


def _drifting(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Zipf(1.3) over 300 keys whose ranks move to other keys every 10 s."""
    names, times, _ = zipf_stream(N, exponent=1.3, keys=300, seed=seed, rate=RATE)
    ranks = np.array([int(k.split("-")[1]) for k in names])
    moved = [f"key-{(r + 37 * (t // 10_000)) % 300}" for r, t in zip(ranks, times, strict=True)]
    return np.array(moved, dtype=object), times


def _single_hot(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """One key with half the tuples, the rest uniform over 400 keys."""
    rng = np.random.default_rng(seed)
    keys = np.array([f"cold-{i}" for i in rng.integers(0, 400, N)], dtype=object)
    keys[rng.random(N) < 0.5] = "hot"
    return keys, (np.arange(N) * 1000.0 / RATE).astype(np.int64)


STREAMS = ["zipf-steep", "zipf-flat", "drifting", "single-hot"]


@cache
def stream(name: str) -> tuple[np.ndarray, np.ndarray]:
    if name == "zipf-steep":
        keys, times, _ = zipf_stream(N, exponent=1.4, keys=500, seed=3, rate=RATE)
    elif name == "zipf-flat":
        keys, times, _ = zipf_stream(N, exponent=0.9, keys=3000, seed=5, rate=RATE)
    elif name == "drifting":
        keys, times = _drifting(seed=8)
    else:
        keys, times = _single_hot(seed=2)
    return keys, _irregular(times, seed=STREAMS.index(name))


def _variant_id(variant: tuple[str, dict]) -> str:
    name, params = variant
    return name + ("(" + ",".join(f"{k}={v}" for k, v in params.items()) + ")" if params else "")


def _in_batches(route_batch, keys: np.ndarray, times: np.ndarray) -> list:
    bounds = [0, *CUTS, len(keys)]
    return [route_batch(keys[a:b], times[a:b]) for a, b in itertools.pairwise(bounds)]


def _assert_same(got: list[int], expected: list[int], keys: np.ndarray, times: np.ndarray) -> None:
    assert len(got) == len(expected)
    wrong = [i for i, (g, e) in enumerate(zip(got, expected, strict=True)) if g != e]
    if wrong:
        i = wrong[0]
        pytest.fail(f"{len(wrong)} tuples differ; first at index {i} (key {keys[i]!r}, "
                    f"t={times[i]} ms): reference {expected[i]}, production {got[i]}")  # fmt: skip


def test_every_grouping_has_a_reference_and_cases_here():
    assert set(REFERENCES) == set(GROUPING_NAMES)
    assert {name for name, _ in VARIANTS} == set(GROUPING_NAMES)
    with pytest.raises(ValueError, match="no parameter"):
        route("SMALOPS", 3, ["a"], [0], {"windw_ms": 10})


@cache
def _reference(variant: int, stream_name: str, workers: int) -> list[int]:
    name, params = VARIANTS[variant]
    return route(name, workers, *stream(stream_name), params)


@pytest.mark.parametrize("stream_name", STREAMS)
@pytest.mark.parametrize("variant", range(len(VARIANTS)), ids=[_variant_id(v) for v in VARIANTS])
def test_production_routes_as_the_reference(variant, stream_name, workers):
    name, params = VARIANTS[variant]
    keys, times = stream(stream_name)
    grouping = make_grouping(name, workers, params)
    got = np.concatenate(_in_batches(grouping.route, keys, times)).tolist()
    _assert_same(got, _reference(variant, stream_name, workers), keys, times)


@pytest.mark.parametrize("stream_name", STREAMS)
@pytest.mark.parametrize(
    "params", [p for n, p in VARIANTS if n == "SMALOPS"], ids=["default", "short"]
)
def test_smalops_message_sets_are_the_references(params, stream_name, workers):
    keys, times = stream(stream_name)
    grouping = SmalopsGrouping(workers, SmalopsParams(**params))
    got = np.concatenate([sets for _, sets in _in_batches(grouping.route_with_message_sets,
                                                           keys, times)]).tolist()  # fmt: skip
    _, expected = smalops_reference.route_with_message_sets(workers, keys.tolist(), times.tolist(),
                                                            params)  # fmt: skip
    _assert_same(got, expected, keys, times)


# Workers per key that each rule reaches on some stream at W = 50 and not by its static part alone:
# a split beyond PKG's two for the splitting rules, a key moved for CONSISTENT_HASH and SMALOPS.
REACHES = {"SHUFFLE": 50, "KEY": 1, "PARTIAL_KEY": 2, "W_CHOICES": 50, "CONSISTENT_HASH": 2,
           "SMALOPS": 2, "DYNAMIC_KEY": 3}  # fmt: skip


@pytest.mark.parametrize("variant", range(len(VARIANTS)), ids=[_variant_id(v) for v in VARIANTS])
def test_the_streams_exercise_each_rule(variant):
    """An oracle is only as good as its streams: each rule goes beyond its static part here."""
    name, _ = VARIANTS[variant]
    spread = [
        pd.Series(_reference(variant, s, 50)).groupby(stream(s)[0]).nunique().max() for s in STREAMS
    ]
    assert max(spread) >= REACHES[name]
