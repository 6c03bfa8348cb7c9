"""The routed-metrics feed: only new commits are read, and the figures never depend on when."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
from deltalake import DeltaTable, write_deltalake

from core.storage import LOCAL_FILES
from gold.metrics import RunMetricsAccumulator
from gold.routed_feed import RoutedMetricsFeed
from gold.transforms import add_routed, distribution_metrics, metrics_frame
from silver.sink import ROUTED_TABLE_COLUMNS

WORKERS = 3


def _commit(path, run_id: str, first_offset: int, rows: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({
        "run_id": run_id, "splitter": 0, "partition": rng.integers(0, 2, rows).astype(np.int32),
        "offset": np.arange(first_offset, first_offset + rows, dtype=np.int64),
        "tuple_index": np.zeros(rows, np.int32), "key": rng.choice(list("abcdefg"), rows),
        "count": np.ones(rows, np.int64),
        # Event times of later commits reach back into earlier ones: order matters.
        "event_time_ms": rng.integers(0, 200_000, rows).astype(np.int64),
        "worker": rng.integers(0, WORKERS, rows).astype(np.int32),
    })[ROUTED_TABLE_COLUMNS]  # fmt: skip
    write_deltalake(str(path), pa.Table.from_pandas(frame, preserve_index=False), mode="append")
    return frame


def _feed(path, run_id: str = "r") -> RoutedMetricsFeed:
    return RoutedMetricsFeed(LOCAL_FILES, str(path), run_id, lambda: RunMetricsAccumulator(WORKERS, 60_000))


def _metrics(feed: RoutedMetricsFeed) -> pd.DataFrame:
    return metrics_frame(feed.accumulator, 1.0)


def _commit_by_commit(commits: list[pd.DataFrame]) -> pd.DataFrame:
    accumulator = RunMetricsAccumulator(WORKERS, 60_000)
    for frame in commits:
        add_routed(accumulator, frame)
    return metrics_frame(accumulator, 1.0)


def test_feed_reads_each_commit_once_and_keeps_other_runs_out(tmp_path):
    path = tmp_path / "routed"
    commits = [_commit(path, "r", 0, 500, seed=1)]
    _commit(path, "other-run", 0, 300, seed=2)
    feed = _feed(path)
    assert feed.advance() == 1
    assert _metrics(feed)["tuples"].iloc[0] == 500
    commits.append(_commit(path, "r", 500, 400, seed=3))
    assert feed.advance() == 2
    assert _metrics(feed)["tuples"].iloc[0] == 900
    assert feed.advance() == 2  # nothing new: nothing added twice
    pd.testing.assert_frame_equal(_metrics(feed), _commit_by_commit(commits))


def test_a_fresh_feed_equals_one_that_followed_every_commit(tmp_path):
    path = tmp_path / "routed"
    following = _feed(path)
    for seed in range(4):
        _commit(path, "r", seed * 1000, 300, seed=seed)
        following.advance()
    fresh = _feed(path)
    fresh.advance()
    pd.testing.assert_frame_equal(_metrics(following), _metrics(fresh))


def test_one_commit_gives_the_full_rebuilds_figures(tmp_path):
    path = tmp_path / "routed"
    frame = _commit(path, "r", 0, 2000, seed=7)
    feed = _feed(path)
    feed.advance()
    expected = distribution_metrics(frame, WORKERS, 1.0)
    pd.testing.assert_frame_equal(_metrics(feed), expected)


def test_rows_deleted_from_silver_make_the_feed_start_over(tmp_path):
    path = tmp_path / "routed"
    _commit(path, "r", 0, 500, seed=1)
    _commit(path, "r", 500, 500, seed=2)
    feed = _feed(path)
    feed.advance()
    DeltaTable(str(path)).delete("offset >= 500")
    assert feed.advance() == 2
    assert _metrics(feed)["tuples"].iloc[0] == 500


def test_a_run_without_rows_has_zero_tuples(tmp_path):
    path = tmp_path / "routed"
    _commit(path, "other", 0, 50, seed=1)
    feed = _feed(path, run_id="absent")
    feed.advance()
    assert _metrics(feed)["tuples"].iloc[0] == 0
