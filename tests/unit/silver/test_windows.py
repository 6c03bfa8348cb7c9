from __future__ import annotations

import pandas as pd

from silver.windows import worker_window_partials


def test_partials_per_window_worker_and_key():
    routed = pd.DataFrame({
        "run_id": "r", "key": ["a", "a", "b", "a"], "count": [2, 3, 1, 4],
        "event_time_ms": [0, 14_999, 1, 15_000], "worker": [0, 0, 1, 0],
    })  # fmt: skip
    partials = worker_window_partials(routed, 15_000)
    rows = {(r.window_start_ms, r.worker, r.key): (r.count, r.tuples, r.window_end_ms)
            for r in partials.itertuples()}  # fmt: skip
    assert rows == {(0, 0, "a"): (5, 2, 15_000), (0, 1, "b"): (1, 1, 15_000),
                    (15_000, 0, "a"): (4, 1, 30_000)}  # fmt: skip


def test_empty_batch_has_the_columns():
    assert "count" in worker_window_partials(pd.DataFrame(), 15_000).columns
