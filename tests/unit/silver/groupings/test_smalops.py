"""SMALOPS (seed 003): heavy keys by lossy counting, best-fit moves, message sets."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from pydantic import ValidationError

from silver.groupings.hashing import hash_keys, stable_hash
from silver.groupings.smalops import SmalopsGrouping, SmalopsParams, best_fit_moves
from tests.unit.silver.groupings.conftest import zipf_stream

WINDOW = 10_000


def _window(counts: dict[str, int], index: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Tuples with these per-key counts, shuffled and spread over counting window ``index``."""
    keys = np.array([k for k, n in counts.items() for _ in range(n)], dtype=object)
    keys = keys[np.random.default_rng(seed + index).permutation(len(keys))]
    times = index * WINDOW + (np.arange(len(keys)) * WINDOW) // len(keys)
    return keys, times.astype(np.int64)


def _filler(prefix: str, n: int) -> dict[str, int]:
    return {f"{prefix}-{i}": 1 for i in range(n)}


def _drifting_zipf(n: int, keys: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Zipf(1.2) at 2000 tuples/s whose ranks shift to other keys every 2.5 s.

    Keys become heavy, get placed, moved and dropped again and again.
    """
    names, times, _ = zipf_stream(n, exponent=1.2, keys=keys, seed=seed, rate=2000)
    ranks = np.array([int(k.split("-")[1]) for k in names])
    shifted = [f"key-{(r + t // 2500) % keys}" for r, t in zip(ranks, times, strict=True)]
    return np.array(shifted, dtype=object), times


def _fp(key: str) -> int:
    return int(hash_keys([key]).fingerprint[0])


def _e_lb(workers: int, owner: np.ndarray, rates: np.ndarray) -> float:
    sizes = np.bincount(owner, weights=rates, minlength=workers)
    return float(np.abs(sizes - sizes.mean()).sum())


def test_a_key_that_stops_being_heavy_is_dropped():
    grouping = SmalopsGrouping(4)
    grouping.route(*_window({"hot": 500, **_filler("a", 500)}, 0))
    assert grouping.tracked_keys() == []  # window 0 has not ended yet
    grouping.route(*_window({"hot": 2, **_filler("b", 998)}, 1))
    tracked = grouping.tracked_keys()
    assert [t.fingerprint for t in tracked] == [_fp("hot")]
    assert tracked[0].rate == 500
    assert [h.key for h in grouping.hot_keys()] == ["hot"]
    untracked_before = grouping.state.untracked_message_set
    keys, times = _window({"hot": 1, **_filler("c", 99)}, 2)
    workers, sets = grouping.route_with_message_sets(keys, times)
    assert grouping.tracked_keys() == []  # 2 of 1000 tuples: no longer heavy
    assert np.array_equal(workers, (hash_keys(keys).home % np.uint32(4)).astype(np.int32))
    assert grouping.state.untracked_message_set > max(untracked_before, tracked[0].message_set)
    assert (sets == grouping.state.untracked_message_set).all()


def test_heavy_at_exactly_the_support_threshold():
    grouping = SmalopsGrouping(3, SmalopsParams(support=0.1))
    grouping.route(*_window({"edge": 100, "below": 99, **_filler("f", 801)}, 0))
    grouping.route(["next"], [WINDOW])
    assert [t.fingerprint for t in grouping.tracked_keys()] == [_fp("edge")]


def test_workers_change_only_at_boundaries_and_then_message_sets_grow():
    params = SmalopsParams(counting_window_ms=1000, decision_interval_ms=1500, support=0.02)
    grouping = SmalopsGrouping(7, params)
    keys, times = _drifting_zipf(60_000, keys=400, seed=8)
    times = times + 250  # windows and decisions no longer start together with the stream
    parts = [grouping.route_with_message_sets(keys[i : i + 3333], times[i : i + 3333])
             for i in range(0, len(keys), 3333)]  # fmt: skip
    workers = np.concatenate([p[0] for p in parts])
    sets = np.concatenate([p[1] for p in parts])
    frame_changes = 0
    for key in np.unique(keys):
        at = np.flatnonzero(keys == key)
        w, m, t = workers[at], sets[at], times[at]
        assert np.all(np.diff(m) >= 0)  # a key's message sets never go back
        moved = np.flatnonzero(w[1:] != w[:-1])
        assert np.all(m[moved + 1] > m[moved])  # a new worker always means a new message set
        crossed = (t[1:] // 1000 > t[:-1] // 1000) | (t[1:] // 1500 > t[:-1] // 1500)
        assert np.all(crossed[moved])  # ... and only happens across a boundary
        assert np.all(m[1:][~crossed] == m[:-1][~crossed])
        frame_changes += len(moved)
    assert frame_changes > 20


def test_best_fit_moves_the_smallest_fitting_key_and_lowers_the_error():
    owner = np.array([0, 0, 1, 2])
    rates = np.array([50, 30, 12, 8])
    fps = np.arange(4)
    moves = best_fit_moves(3, owner, rates, fps)
    # R = [80, 12, 8], R_avg = 100/3: worker 0 is overloaded; key 1 (30) fits best on worker 2.
    assert moves == [(1, 2)]
    moved = owner.copy()
    moved[1] = 2
    assert _e_lb(3, moved, rates) < _e_lb(3, owner, rates)


def test_best_fit_does_nothing_when_every_move_widens_the_gap():
    # R = [100, 10, 5], R_avg = 115/3: moving 100 anywhere widens |R_source - R_target|.
    assert best_fit_moves(3, np.array([0, 1, 2]), np.array([100, 10, 5]), np.arange(3)) == []
    assert best_fit_moves(2, np.array([0, 1]), np.array([10, 2]), np.arange(2)) == []
    assert best_fit_moves(1, np.array([0, 0]), np.array([10, 2]), np.arange(2)) == []


def test_a_stream_whose_rates_shift_triggers_a_best_fit_move():
    grouping = SmalopsGrouping(2)
    home = stable_hash("A") % 2
    grouping.route(*_window({"A": 500, "B": 300, "C": 200}, 0))
    grouping.route(*_window({"A": 100, "B": 300, "C": 200}, 1))
    placed = {t.fingerprint: t for t in grouping.tracked_keys()}
    # Power of two choices, heaviest first: A on its first candidate, then B and C on the other.
    assert [placed[_fp(k)].worker for k in "ABC"] == [home, 1 - home, 1 - home]
    keys, times = _window({"A": 100, "B": 300, "C": 200}, 2)
    workers, sets = grouping.route_with_message_sets(keys, times)
    after = {t.fingerprint: t for t in grouping.tracked_keys()}
    # Window 1's rates: R = [100, 500] around R_avg 300; C (200) fits |200 + 100 - 300| = 0.
    assert after[_fp("C")].worker == home and after[_fp("B")].worker == 1 - home
    assert after[_fp("C")].message_set > placed[_fp("C")].message_set
    assert after[_fp("B")].message_set == placed[_fp("B")].message_set
    assert set(workers[keys == "C"].tolist()) == {home}
    assert set(sets[keys == "C"].tolist()) == {after[_fp("C")].message_set}


def test_keys_never_heavy_route_by_key(workers):
    params = SmalopsParams(counting_window_ms=2000, decision_interval_ms=3000, support=0.01)
    grouping = SmalopsGrouping(workers, params)
    keys, times, _ = zipf_stream(40_000, exponent=1.3, keys=2000, seed=6, rate=2000)
    routed = np.concatenate([grouping.route(keys[i : i + 5000], times[i : i + 5000])
                             for i in range(0, len(keys), 5000)])  # fmt: skip
    windows = times // 2000
    light = set(keys.tolist())
    for window in np.unique(windows):
        counts = Counter(keys[windows == window].tolist())
        threshold = 0.01 * int((windows == window).sum())
        light -= {k for k, n in counts.items() if n >= threshold}  # lossy counts never exceed these
    mask = np.isin(keys, list(light))
    homes = hash_keys(keys[mask]).home % np.uint32(workers)
    assert mask.sum() > 10_000
    assert np.array_equal(routed[mask], homes.astype(np.int32))


@pytest.mark.parametrize(("support", "exponent"), [(0.01, 1.1), (0.02, 0.8), (0.005, 1.4)])
def test_lossy_counting_undercounts_by_at_most_epsilon_n(support, exponent):
    params = SmalopsParams(support=support, counting_window_ms=10**12)
    grouping = SmalopsGrouping(5, params)
    keys, times, _ = zipf_stream(50_000, exponent=exponent, keys=20_000, seed=3)
    grouping.route(keys, times)
    s = grouping.state
    n = s.window_tuples
    estimated = dict(zip(s.lc_fp[: s.lc_size].tolist(), s.lc_count[: s.lc_size].tolist(), strict=True))
    truth = Counter(hash_keys(keys).fingerprint.tolist())
    errors = np.array([true - estimated.get(fp, 0) for fp, true in truth.items()])
    assert n == len(keys)
    assert errors.min() >= 0  # never over-counts
    assert errors.max() <= params.epsilon * n
    assert s.lc_size < len(truth)  # pruning happened


def test_a_table_sized_too_small_stays_deterministic_and_never_over_counts():
    params = SmalopsParams(support=0.05, max_window_tuples=1, counting_window_ms=10**12)
    keys, times, _ = zipf_stream(20_000, exponent=0.5, keys=20_000, seed=4)
    first, second = SmalopsGrouping(3, params), SmalopsGrouping(3, params)
    assert np.array_equal(first.route(keys, times), second.route(keys, times))
    s = first.state
    truth = Counter(hash_keys(keys).fingerprint.tolist())
    assert s.lc_size <= len(s.lc_fp)
    assert all(c <= truth[fp] for fp, c in zip(s.lc_fp[: s.lc_size].tolist(),
                                               s.lc_count[: s.lc_size].tolist(), strict=True))  # fmt: skip


@pytest.mark.parametrize("batch", [1, 13, 2500, 9999])
def test_batch_splits_and_restores_route_like_one_uninterrupted_run(batch):
    params = SmalopsParams(counting_window_ms=700, decision_interval_ms=1100, support=0.02)
    keys, times = _drifting_zipf(15_000, keys=600, seed=12)
    whole = SmalopsGrouping(6, params)
    expected_workers, expected_sets = whole.route_with_message_sets(keys, times)
    assert whole.state.next_message_set > 30
    grouping, workers, sets = SmalopsGrouping(6, params), [], []
    for start in range(0, len(keys), batch):
        w, m = grouping.route_with_message_sets(keys[start : start + batch], times[start : start + batch])
        workers.append(w)
        sets.append(m)
        if (start // batch) % (11 if batch == 1 else 2) == 0:  # fewer restores for 1-tuple batches
            grouping = SmalopsGrouping.restore(6, params, grouping.snapshot())
    assert np.array_equal(np.concatenate(workers), expected_workers)
    assert np.array_equal(np.concatenate(sets), expected_sets)
    assert grouping.tracked_keys() == whole.tracked_keys()


def test_route_and_route_with_message_sets_agree():
    keys, times, _ = zipf_stream(20_000, keys=500, seed=1)
    workers, _ = SmalopsGrouping(5).route_with_message_sets(keys, times)
    assert np.array_equal(SmalopsGrouping(5).route(keys, times), workers)
    empty = SmalopsGrouping(5).route_with_message_sets([], [])
    assert empty[0].dtype == np.int32 and empty[1].dtype == np.int64 and len(empty[0]) == 0


def test_hot_key_names_are_learnt_from_batches_and_survive_a_restore():
    grouping = SmalopsGrouping(3)
    grouping.route(*_window({"hot": 400, **_filler("f", 600)}, 0))
    grouping.route(["other"], [WINDOW])  # closes window 0; "hot" is not in this batch
    assert grouping.hot_keys()[0].key == f"#{_fp('hot') & 0xFFFFFFFFFFFFFFFF:016x}"
    grouping.route(["hot"], [WINDOW + 1])
    restored = SmalopsGrouping.restore(3, None, grouping.snapshot())
    (hot,) = restored.hot_keys()
    assert (hot.key, hot.pool_size, hot.estimated_share) == ("hot", 1, 0.4)


def test_parameters():
    assert SmalopsParams().epsilon == pytest.approx(0.001)
    assert SmalopsParams(support=0.05).epsilon == pytest.approx(0.005)
    assert SmalopsParams(support=0.05, epsilon=0.001).epsilon == 0.001
    with pytest.raises(ValidationError):
        SmalopsParams(support=0.01, epsilon=0.02)
    with pytest.raises(ValidationError):
        SmalopsParams(counting_window_ms=0)
