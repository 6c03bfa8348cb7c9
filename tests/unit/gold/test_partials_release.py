"""Released windows: a long run keeps the sums of a few windows only, and gold stays the same."""

from __future__ import annotations

import numpy as np
import pandas as pd

from gold.metrics.partials import RunPartials

WORKERS, WINDOW_MS, KEEP = 4, 60_000, 2


def _batch(rng: np.random.Generator, newest: int, rows: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Worker partials of one micro-batch: mostly the newest worker windows, 2 % late."""
    late = rng.random(rows) < 0.02
    worker_window = np.where(
        late, rng.integers(0, newest + 1, rows), newest - rng.integers(0, 2, rows)
    )
    starts = np.maximum(worker_window, 0) * 15_000
    windows = pd.DataFrame({
        "window_start_ms": starts, "worker": rng.integers(0, WORKERS, rows),
        "key": [f"k{k}" for k in rng.zipf(1.5, rows) % 500], "count": rng.integers(1, 4, rows),
        "tuples": rng.integers(1, 3, rows),
    })  # fmt: skip
    latency = pd.DataFrame({
        "window_start_ms": starts, "worker": rng.integers(0, WORKERS, rows),
        "latency_ms": rng.integers(0, 50, rows).astype(float), "tuples": rng.integers(1, 3, rows),
        "first_event_ms": starts + rng.integers(0, 15_000, rows),
        "last_completion_ms": rng.uniform(0, 20_000, rows),
    })  # fmt: skip
    return windows, latency


def _of_window(rows: list[pd.DataFrame], start: int) -> pd.DataFrame:
    every = pd.concat(rows, ignore_index=True)
    return every[every["window_start_ms"] // WINDOW_MS * WINDOW_MS == start]


def test_released_windows_restored_when_late_partials_come_publish_what_keeping_all_would():
    rng = np.random.default_rng(7)
    kept, released = RunPartials(WORKERS, WINDOW_MS, 1.0, 1.0), RunPartials(WORKERS, WINDOW_MS, 1.0, 1.0)
    seen_windows, seen_latency, held, restored = [], [], [], 0
    for newest in range(2, 80):  # 80 worker windows: 20 aggregation windows
        windows, latency = _batch(rng, newest, 200)
        seen_windows.append(windows)
        seen_latency.append(latency)
        for partials in (kept, released):
            partials.add_windows(windows)
            partials.add_latency(latency)
        for start in released.take_stale():  # what the feed reads again from silver
            released.restore(start, _of_window(seen_windows, start),
                             _of_window(seen_latency, start))  # fmt: skip
            restored += 1
        touched = kept.take_touched()
        assert released.take_touched() == touched
        assert released.key_counts(touched).equals(kept.key_counts(touched))
        assert released.worker_load(touched).equals(kept.worker_load(touched))
        assert released.result(3.0, touched) == kept.result(3.0, touched)
        released.release(KEEP)
        held.append(len(released._windows | released._latency))
    assert restored > 20  # late partials reached released windows again and again
    assert max(held) == KEEP  # of the 20 windows, the newest two stay after each refresh
    assert len(kept._windows) == 20


def test_a_window_released_and_reached_again_is_stale_until_restored():
    partials = RunPartials(WORKERS, WINDOW_MS, 1.0, 1.0)
    rows = pd.DataFrame({"window_start_ms": [0, 60_000, 120_000], "worker": [0, 1, 2],
                         "key": ["a", "b", "a"], "count": [1, 2, 3], "tuples": [1, 1, 1]})  # fmt: skip
    partials.add_windows(rows)
    partials.take_touched()
    partials.release(1)
    assert sorted(partials._windows) == [120_000]
    partials.add_windows(rows.iloc[:1])
    assert partials.take_stale() == [0] and partials.take_stale() == []
    assert partials.tuples == 4  # the run's totals count the late row at once
    partials.restore(0, pd.concat([rows.iloc[:1]] * 2), pd.DataFrame())
    assert partials.key_counts([0]).select(["key", "count", "tuples"]).to_pylist() == [
        {"key": "a", "count": 2, "tuples": 2}]  # fmt: skip
