"""Gold's metrics from the workers' partials, against every figure computed from the tuples themselves."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from gold.metrics.partials import _NO_SUMS, RunPartials
from gold.metrics.summary import weighted_percentiles
from silver.workers import WORKER_INPUT_ARROW, serve_tuples
from tests.reference_metrics import reference_metrics

WORKERS = 4


def _commits(commits: int, rows: int, seed: int) -> list[pa.Table]:
    rng = np.random.default_rng(seed)
    out = []
    for version in range(commits):
        out.append(pa.table({
            "event_time_ms": rng.integers(0, 300_000, rows),
            "partition": rng.integers(0, 3, rows).astype(np.int32),
            "offset": np.arange(version * rows, (version + 1) * rows),
            "tuple_index": rng.integers(0, 2, rows).astype(np.int32),
            "key": rng.choice([f"k{i}" for i in range(40)], rows, p=_zipf(40)),
            "count": np.ones(rows, np.int64),
            "worker": rng.integers(0, WORKERS, rows).astype(np.int32),
        }, schema=WORKER_INPUT_ARROW))  # fmt: skip
    return out


def _zipf(n: int) -> np.ndarray:
    weights = 1 / np.arange(1, n + 1) ** 1.2
    return weights / weights.sum()


def _reference(commits: list[pa.Table], window_ms: int, process_ms: float,
               speed: float) -> dict[int | None, dict[str, float]]:  # fmt: skip
    frames = [c.to_pandas().assign(batch=i) for i, c in enumerate(commits)]
    return reference_metrics(pd.concat(frames), WORKERS, window_ms, process_ms, speed)


def _served(commits: list[pa.Table], window_ms: int, process_ms: float, speed: float,
            per_worker: bool = True) -> RunPartials:  # fmt: skip
    """Each commit served as the Spark workers serve it (one worker per call) or as the
    simulator does (every worker at once)."""
    partials, states = RunPartials(WORKERS, window_ms, speed, process_ms), {}
    for batch in commits:  # one micro-batch of the silver query each
        groups = ([batch.filter(pa.compute.equal(batch["worker"], w)) for w in range(WORKERS)]
                  if per_worker else [batch])  # fmt: skip
        for rows in groups:
            if rows.num_rows:
                windows, waits, served = serve_tuples(rows, states, 15_000, process_ms, speed)
                states.update(served)
                partials.add_windows(windows.to_pandas())
                partials.add_latency(waits.to_pandas())
    return partials


def _assert_matches(row, expected: dict[str, float]) -> None:
    for name, want in expected.items():
        got = getattr(row, name)
        if name in ("p50_ms", "p99_ms"):  # latencies are kept to three significant digits
            assert got == pytest.approx(want, rel=5e-3), name
        elif isinstance(want, float):
            assert got == pytest.approx(want, rel=1e-9, abs=1e-9), name
        else:
            assert got == want, name


@pytest.mark.parametrize("per_worker", [True, False])
@pytest.mark.parametrize(("process_ms", "speed"), [(1.0, 1.0), (2.0, 10.0), (0.7, 3.0), (20.0, 1.0)])
def test_partials_give_the_figures_of_the_tuples(process_ms, speed, per_worker):
    commits = _commits(4, 1500, seed=11)
    expected = _reference(commits, 60_000, process_ms, speed)
    actual = _served(commits, 60_000, process_ms, speed, per_worker).result(2.0)
    _assert_matches(actual.cumulative, expected[None])
    assert [w.window_start_ms for w in actual.windows] == sorted(k for k in expected if k is not None)
    for row in actual.windows:
        _assert_matches(row, expected[row.window_start_ms])


@pytest.mark.parametrize("percents", [(50, 99), (0, 100), (25, 33.3)])
def test_weighted_percentiles_equal_numpys_on_the_repeated_values(percents):
    rng = np.random.default_rng(5)
    values = rng.choice(rng.normal(10, 3, 30), 30, replace=False)
    counts = rng.integers(1, 50, 30)
    expected = np.percentile(np.repeat(values, counts), percents)
    assert weighted_percentiles(values, counts, percents) == pytest.approx(list(expected))


def test_a_run_without_partials_has_zero_tuples():
    assert RunPartials(WORKERS, 60_000, 1.0, 1.0).result(1.0).cumulative.tuples == 0


def test_partials_added_twice_count_twice_and_only_touched_windows_are_taken():
    frame = pd.DataFrame({"window_start_ms": [0], "worker": [1], "key": ["a"], "count": [3],
                          "tuples": [2]})  # fmt: skip
    partials = RunPartials(WORKERS, 60_000, 1.0, 1.0)
    partials.add_windows(frame)
    partials.add_windows(frame)
    assert partials.key_counts([0]).select(["count", "tuples"]).to_pylist() == [
        {"count": 6, "tuples": 4}]  # fmt: skip
    assert partials.take_touched() == [0] and partials.take_touched() == []
    partials.add_windows(frame.assign(window_start_ms=75_000))
    assert partials.take_touched() == [60_000]
    assert partials.result(1.0, [60_000]).windows[0].tuples == 2
    assert partials.result(1.0).cumulative.tuples == 6


def test_windows_published_piecemeal_equal_one_result():
    commits = _commits(4, 800, seed=3)
    whole = _served(commits, 60_000, 1.0, 1.0).result(1.0)
    partials, states, published = RunPartials(WORKERS, 60_000, 1.0, 1.0), {}, {}
    for version in range(4):  # a refresh after each commit publishes the windows it touched
        for worker in range(WORKERS):
            rows = commits[version].filter(pa.compute.equal(commits[version]["worker"], worker))
            windows, waits, served = serve_tuples(rows, states, 15_000, 1.0, 1.0)
            states.update(served)
            partials.add_windows(windows.to_pandas())
            partials.add_latency(waits.to_pandas())
        for row in partials.result(1.0, partials.take_touched()).windows:
            published[row.window_start_ms] = row
    assert [published[s] for s in sorted(published)] == whole.windows


def _worker_windows(rows: list[tuple[str, int, int, int]]) -> pd.DataFrame:
    """``silver.worker_windows`` rows of (key, count, event time, worker) tuples, by hand."""
    tuples = pd.DataFrame(rows, columns=["key", "count", "event_time_ms", "worker"])
    start = tuples["event_time_ms"] // 15_000 * 15_000
    return (tuples.assign(window_start_ms=start)
            .groupby(["window_start_ms", "worker", "key"])
            .agg(count=("count", "sum"), tuples=("count", "size")).reset_index())  # fmt: skip


ROUTED = [("a", 2, 0, 0), ("a", 3, 10, 1), ("b", 1, 20, 1), ("a", 1, 70_000, 0)]


def test_key_counts_merge_partials_across_workers():
    partials = RunPartials(3, 60_000, 1.0, 1.0)
    partials.add_windows(_worker_windows(ROUTED))
    table = partials.key_counts([0, 60_000]).to_pandas()
    rows = {(r.window_start_ms, r.key): (r.count, r.tuples, r.workers) for r in table.itertuples()}
    assert rows == {(0, "a"): (5, 2, 2), (0, "b"): (1, 1, 1), (60_000, "a"): (1, 1, 1)}
    assert (table["window_end_ms"] - table["window_start_ms"] == 60_000).all()


def test_worker_load_lists_every_worker_of_each_window():
    partials = RunPartials(3, 60_000, 1.0, 1.0)
    partials.add_windows(_worker_windows(ROUTED))
    table = partials.worker_load([0, 60_000]).to_pandas()
    first = table[table["window_start_ms"] == 0].sort_values("worker")
    assert first["tuples"].tolist() == [1, 2, 0]
    assert first["keys"].tolist() == [1, 2, 0]
    assert table["tuples"].sum() == 4 and len(table) == 6


def test_a_window_with_latency_partials_only_has_no_rows_yet():
    partials = RunPartials(3, 60_000, 1.0, 1.0)
    partials.add_windows(_worker_windows(ROUTED))
    partials.add_latency(pd.DataFrame({"window_start_ms": [120_000], "worker": [0],
                                       "latency_ms": [1.0], "tuples": [1],
                                       "first_event_ms": [120_000],
                                       "last_completion_ms": [1.0]}))  # fmt: skip
    touched = partials.take_touched()
    assert touched == [0, 60_000, 120_000]
    assert sorted(set(partials.key_counts(touched)["window_start_ms"].to_pylist())) == [0, 60_000]
    assert sorted(set(partials.worker_load(touched)["window_start_ms"].to_pylist())) == [0, 60_000]
    assert [w.window_start_ms for w in partials.result(1.0, touched).windows] == [0, 60_000]


@pytest.mark.parametrize("seed", range(20))
def test_window_sums_merged_batch_by_batch_equal_a_plain_count(seed):
    rng, sums, oracle = np.random.default_rng(seed), _NO_SUMS, {}
    for _ in range(rng.integers(1, 8)):  # some batches empty, pairs repeated within and across
        n = int(rng.integers(0, 60))
        pairs, count, tuples = (rng.integers(0, 40, n), rng.integers(1, 9, n),
                                rng.integers(1, 9, n))  # fmt: skip
        sums = sums.add(pairs, count, tuples)
        for pair, c, t in zip(pairs.tolist(), count.tolist(), tuples.tolist(), strict=True):
            oracle[pair] = (oracle.get(pair, (0, 0))[0] + c, oracle.get(pair, (0, 0))[1] + t)
    assert sums.pairs.tolist() == sorted(oracle)
    assert list(zip(sums.count.tolist(), sums.tuples.tolist(), strict=True)) == [
        oracle[p] for p in sorted(oracle)]  # fmt: skip
