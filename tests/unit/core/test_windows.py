"""One window arithmetic: epoch-aligned tumbling windows, for ints and arrays alike."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.windows import window_end, window_start


@pytest.mark.parametrize(
    ("event_time_ms", "width_ms", "start"),
    [
        (0, 60_000, 0),
        (59_999, 60_000, 0),
        (60_000, 60_000, 60_000),
        (123_456, 15_000, 120_000),
        (1_700_000_012_345, 10_000, 1_700_000_010_000),
        (-1, 60_000, -60_000),  # before the epoch: the window that starts before it
    ],
)
def test_a_time_falls_in_the_window_whose_start_is_the_multiple_below_it(
    event_time_ms: int, width_ms: int, start: int
) -> None:
    assert window_start(event_time_ms, width_ms) == start
    assert window_end(start, width_ms) == start + width_ms


def test_arrays_are_windowed_element_by_element_and_keep_their_kind() -> None:
    times = np.array([0, 14_999, 15_000, 44_999], dtype=np.int64)
    starts = window_start(times, 15_000)
    assert isinstance(starts, np.ndarray)
    assert starts.tolist() == [0, 0, 15_000, 30_000]
    assert window_end(starts, 15_000).tolist() == [15_000, 15_000, 30_000, 45_000]
    series = window_start(pd.Series(times), 15_000)
    assert isinstance(series, pd.Series)
    assert series.tolist() == starts.tolist()


@pytest.mark.parametrize("width_ms", [0, -15_000])
def test_a_window_has_a_positive_width(width_ms: int) -> None:
    with pytest.raises(ValueError, match="positive"):
        window_start(1_000, width_ms)
    with pytest.raises(ValueError, match="positive"):
        window_end(0, width_ms)


@given(st.integers(-(10**13), 10**13), st.integers(1, 10_000), st.integers(1, 8))
def test_worker_windows_nest_in_the_aggregation_window(time_ms: int, worker_ms: int,
                                                       multiple: int) -> None:  # fmt: skip
    # Gold assigns a worker window to the aggregation window of its start.
    aggregation_ms = worker_ms * multiple
    start = window_start(time_ms, aggregation_ms)
    assert start <= time_ms < window_end(start, aggregation_ms)
    assert window_start(window_start(time_ms, worker_ms), aggregation_ms) == start
