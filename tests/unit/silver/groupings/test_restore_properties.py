"""Every grouping, stopped and restored at generated cut points of generated streams,
routes exactly like one that never stopped.

Streams are skewed over a few dozen keys (so hot keys form and pools grow),
with event times that mostly advance by up to a few seconds and sometimes step
back; short windows and intervals make the groupings change state often.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from silver.groupings.registry import GROUPING_NAMES, grouping_class, make_grouping

FAST = {"warm_up_ms": 1000, "check_interval_ms": 2000, "key_space_cycle_ms": 1500,
        "distinct_key_count": 10}  # fmt: skip
VARIANTS = [(name, {}) for name in GROUPING_NAMES] + [
    ("DYNAMIC_KEY", {"mode": "seed", **FAST}),
    ("DYNAMIC_KEY", {"mode": "adaptive", **FAST}),
    ("CONSISTENT_HASH", {"strategy": "halving"}),
    ("SMALOPS", {"counting_window_ms": 1500, "decision_interval_ms": 2500}),
    ("W_CHOICES", {"min_heavy_count": 1}),
]  # fmt: skip


def _keys(picks: np.ndarray, hot: int) -> np.ndarray:
    # One byte per tuple: 3/8 of them the hot key, 1/4 among six warm keys, the rest a tail.
    index = np.where(picks < 96, hot, np.where(picks < 160, picks % 6, picks % 61))
    return np.array([f"key-{i}" for i in index.tolist()], dtype=object)


def _steps(codes: np.ndarray) -> np.ndarray:
    # One byte per step: half 0..50 ms, most others up to ~3 s, a few up to 2 s back.
    return np.where(codes < 128, codes % 51,
                    np.where(codes < 240, (codes - 128) * 27, (240 - codes) * 130))  # fmt: skip


@st.composite
def streams(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray]:
    """``(keys, event_times_ms)``: a hot key, a warm few and a tail, in generated order.

    Drawn as bytes (one per tuple and per step), which hypothesis generates and
    shrinks far faster than lists of integers.
    """
    n = draw(st.integers(1, 400))
    picks = np.frombuffer(draw(st.binary(min_size=n, max_size=n)), np.uint8).astype(np.int64)
    codes = np.frombuffer(draw(st.binary(min_size=n, max_size=n)), np.uint8).astype(np.int64)
    start = draw(st.integers(-(1 << 40), 1 << 42))
    return _keys(picks, draw(st.integers(0, 3))), start + np.cumsum(_steps(codes))


@pytest.mark.parametrize(("name", "params"), VARIANTS, ids=lambda v: str(v))
@given(stream=streams(), workers=st.integers(1, 16), data=st.data())
def test_restored_at_any_cut_points_routes_like_an_uninterrupted_run(name, params, stream,
                                                                      workers, data):  # fmt: skip
    keys, times = stream
    whole = make_grouping(name, workers, params).route(keys, times)
    cuts = sorted(data.draw(st.sets(st.integers(0, len(keys)), max_size=8), label="cuts"))
    grouping, pieces = make_grouping(name, workers, params), []
    for start, stop in zip([0, *cuts], [*cuts, len(keys)], strict=True):
        pieces.append(grouping.route(keys[start:stop], times[start:stop]))
        grouping = grouping_class(name).restore(workers, grouping.params, grouping.snapshot())
    assert np.array_equal(np.concatenate(pieces), whole)
    assert ((whole >= 0) & (whole < workers)).all()
