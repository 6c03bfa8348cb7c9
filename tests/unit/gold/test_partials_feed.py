"""The partials feed: only new commits are read, other runs stay out, and the sums never depend on when."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pyarrow as pa
from deltalake import DeltaTable, write_deltalake

from core.storage import LOCAL_FILES
from gold.metrics.partials import RunPartials
from gold.partials_feed import RunPartialsFeed
from silver.workers import WORKER_LATENCY_ARROW, WORKER_WINDOWS_ARROW

WORKERS = 3


def _commit(tmp_path, run_id: str, batch_id: int, rows: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    starts = rng.integers(0, 8, rows) * 15_000
    windows = pa.table({
        "run_id": [run_id] * rows, "batch_id": np.full(rows, batch_id),
        "window_start_ms": starts, "worker": rng.integers(0, WORKERS, rows).astype(np.int32),
        "key": [f"k{i}" for i in range(rows)], "count": rng.integers(1, 5, rows),
        "tuples": rng.integers(1, 5, rows), "window_end_ms": starts + 15_000,
    }, schema=WORKER_WINDOWS_ARROW)  # fmt: skip
    latency = pa.table({
        "run_id": [run_id] * rows, "batch_id": np.full(rows, batch_id), "window_start_ms": starts,
        "worker": rng.integers(0, WORKERS, rows).astype(np.int32),
        "latency_ms": rng.integers(1, 20, rows).astype(float), "tuples": rng.integers(1, 5, rows),
        "first_event_ms": starts + rng.integers(0, 100, rows),
        "last_completion_ms": rng.uniform(100, 16_000, rows),
    }, schema=WORKER_LATENCY_ARROW)  # fmt: skip
    snapshots = pa.table({"run_id": [run_id], "splitter": pa.array([0], pa.int32()),
                          "event_time_ms": [batch_id], "state": [b"s"]})  # fmt: skip
    write_deltalake(str(tmp_path / "windows"), windows, mode="append")
    write_deltalake(str(tmp_path / "latency"), latency, mode="append")
    write_deltalake(str(tmp_path / "snapshots"), snapshots, mode="append")


def _feed(tmp_path, run_id: str = "r") -> RunPartialsFeed:
    return RunPartialsFeed(LOCAL_FILES, *(str(tmp_path / t) for t in ("windows", "latency",
                                                                      "snapshots")),
                           run_id, lambda: RunPartials(WORKERS, 60_000, 1.0, 1.0))  # fmt: skip


def _metrics(feed: RunPartialsFeed) -> pd.DataFrame:
    result = feed.partials.result(1.0)
    return pd.DataFrame([r.to_dict() for r in (result.cumulative, *result.windows)])


def _taken(feed: RunPartialsFeed) -> tuple[list[int], bool]:
    snapshots, whole_run = feed.take_snapshots()
    return sorted(snapshots["event_time_ms"].to_pylist()), whole_run


def test_snapshots_wait_until_taken(tmp_path):
    _commit(tmp_path, "r", 0, 100, seed=1)
    feed = _feed(tmp_path)
    feed.advance()
    _commit(tmp_path, "r", 1, 100, seed=2)
    feed.advance()
    assert _taken(feed) == ([0, 1], True)  # two reads, one take: every snapshot so far


def test_feed_reads_each_commit_once_and_keeps_other_runs_out(tmp_path):
    _commit(tmp_path, "r", 0, 500, seed=1)
    _commit(tmp_path, "other-run", 0, 300, seed=2)
    feed = _feed(tmp_path)
    feed.advance()
    assert _taken(feed) == ([0], True)  # the run's snapshot only, and all of the run's
    tuples = feed.partials.tuples
    feed.advance()
    assert _taken(feed) == ([], False)  # nothing new: nothing added twice
    assert feed.partials.tuples == tuples
    _commit(tmp_path, "r", 1, 400, seed=3)
    feed.advance()
    assert _taken(feed) == ([1], False)
    fresh = _feed(tmp_path)
    fresh.advance()
    pd.testing.assert_frame_equal(_metrics(feed), _metrics(fresh))


def test_a_fresh_feed_equals_one_that_followed_every_commit(tmp_path):
    following = _feed(tmp_path)
    for seed in range(4):
        _commit(tmp_path, "r", seed, 300, seed=seed)
        following.advance()
    fresh = _feed(tmp_path)
    fresh.advance()
    pd.testing.assert_frame_equal(_metrics(following), _metrics(fresh))
    assert _metrics(fresh)["tuples"].iloc[0] == sum(
        DeltaTable(str(tmp_path / "windows")).to_pandas()["tuples"]
    )


def test_rows_deleted_from_silver_make_the_feed_start_over(tmp_path):
    _commit(tmp_path, "r", 0, 500, seed=1)
    _commit(tmp_path, "r", 1, 500, seed=2)
    feed = _feed(tmp_path)
    feed.advance()
    feed.take_snapshots()
    DeltaTable(str(tmp_path / "windows")).delete("batch_id >= 1")
    feed.advance()
    assert _taken(feed) == ([0, 1], True)  # read again from the start
    kept = DeltaTable(str(tmp_path / "windows")).to_pandas()["tuples"].sum()
    assert _metrics(feed)["tuples"].iloc[0] == kept


def test_a_run_without_rows_has_zero_tuples(tmp_path):
    _commit(tmp_path, "other", 0, 50, seed=1)
    feed = _feed(tmp_path, run_id="absent")
    feed.advance()
    assert _taken(feed) == ([], True)
    assert _metrics(feed)["tuples"].iloc[0] == 0


def test_files_holding_several_runs_give_the_run_its_rows_only(tmp_path):
    # One run's files are taken whole by their statistics; a file of several runs (or
    # with rows of no run) is filtered row by row. The oracle: the written rows, summed.
    rows = 90
    runs = ["r", "other", None] * (rows // 3)
    rng = np.random.default_rng(5)
    starts = rng.integers(0, 4, rows) * 15_000
    windows = pa.table({
        "run_id": runs, "batch_id": np.zeros(rows, np.int64), "window_start_ms": starts,
        "worker": rng.integers(0, WORKERS, rows).astype(np.int32),
        "key": [f"k{i}" for i in range(rows)], "count": rng.integers(1, 5, rows),
        "tuples": rng.integers(1, 9, rows), "window_end_ms": starts + 15_000,
    }, schema=WORKER_WINDOWS_ARROW)  # fmt: skip
    write_deltalake(str(tmp_path / "windows"), windows, mode="append")
    _commit(tmp_path, "r", 1, 60, seed=6)  # and a file of the run's own
    feed = _feed(tmp_path)
    feed.advance()
    written = DeltaTable(str(tmp_path / "windows")).to_pandas()
    assert _metrics(feed)["tuples"].iloc[0] == written.loc[written["run_id"] == "r", "tuples"].sum()


def _commit_at(tmp_path, batch_id: int, window_start_ms: int, rows: int, seed: int) -> None:
    """A commit of the run's partials, all in the worker windows of one aggregation window."""
    rng = np.random.default_rng(seed)
    starts = window_start_ms + rng.integers(0, 4, rows) * 15_000
    common = {"run_id": ["r"] * rows, "batch_id": np.full(rows, batch_id),
              "window_start_ms": starts, "worker": rng.integers(0, WORKERS, rows).astype(np.int32)}  # fmt: skip
    write_deltalake(str(tmp_path / "windows"), pa.table({
        **common, "key": [f"k{k}" for k in rng.integers(0, 50, rows)],
        "count": rng.integers(1, 5, rows), "tuples": rng.integers(1, 5, rows),
        "window_end_ms": starts + 15_000,
    }, schema=WORKER_WINDOWS_ARROW), mode="append")  # fmt: skip
    write_deltalake(str(tmp_path / "latency"), pa.table({
        **common, "latency_ms": rng.integers(1, 20, rows).astype(float),
        "tuples": rng.integers(1, 5, rows), "first_event_ms": starts + rng.integers(0, 100, rows),
        "last_completion_ms": rng.uniform(100, 16_000, rows),
    }, schema=WORKER_LATENCY_ARROW), mode="append")  # fmt: skip


def test_late_partials_of_a_released_window_are_read_again_from_silver(tmp_path):
    write_deltalake(str(tmp_path / "snapshots"), pa.table({
        "run_id": ["r"], "splitter": pa.array([0], pa.int32()), "event_time_ms": [0],
        "state": [b"s"]}), mode="append")  # fmt: skip
    feed, published = _feed(tmp_path), {}
    # Ten windows in order, then late partials of the first, third and last again.
    order = [*range(10), 0, 2, 0, 9]
    for batch, window in enumerate(order):
        _commit_at(tmp_path, batch, window * 60_000, 40, seed=batch)
        feed.advance()
        touched = feed.partials.take_touched()
        assert touched == [window * 60_000]
        counts = feed.partials.key_counts(touched)
        for row in feed.partials.result(1.0, touched).windows:
            published[row.window_start_ms] = (row, counts)
        feed.partials.release(2)
        assert len(feed.partials._windows) <= 2
    fresh = _feed(tmp_path)
    fresh.advance()
    assert feed.partials.result(1.0, []).cumulative == fresh.partials.result(1.0).cumulative
    for row in fresh.partials.result(1.0).windows:
        start = row.window_start_ms
        got_row, got_counts = published[start]
        assert dataclasses.replace(got_row, throughput=row.throughput) == row  # the run's, then
        assert got_counts.equals(fresh.partials.key_counts([start]))
