"""The worker step: window partials and FIFO latencies, however the tuples are batched."""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from silver.blocks import TUPLES, pack, unpack
from silver.queueing import FifoQueueModel, latency_bucket
from silver.workers import (
    BUSY,
    WORKER_BUSY_ARROW,
    WORKER_INPUT_ARROW,
    WorkerServing,
    serve_tuples,
    serve_worker_group,
)


def _tuples(rows: int, seed: int, worker: int = 3) -> tuple[pa.Table, np.ndarray]:
    """Tuples for one worker, and the micro-batch (0-3) each arrives in."""
    rng = np.random.default_rng(seed)
    batches = np.sort(rng.integers(0, 4, rows))
    return pa.table({
        "event_time_ms": rng.integers(0, 90_000, rows),
        "partition": rng.integers(0, 3, rows).astype(np.int32), "offset": np.arange(rows),
        "tuple_index": np.zeros(rows, np.int32), "key": rng.choice(list("abcde"), rows),
        "count": rng.integers(1, 4, rows), "worker": np.full(rows, worker, np.int32),
    }, schema=WORKER_INPUT_ARROW), batches  # fmt: skip


def _stream_order(table: pa.Table, batches: np.ndarray) -> pd.DataFrame:
    return table.to_pandas().assign(batch=batches).sort_values(
        ["batch", "event_time_ms", "partition", "offset", "tuple_index"], kind="stable")


@pytest.mark.parametrize(("process_ms", "speed"), [(1.0, 1.0), (2.5, 10.0), (0.3, 0.5)])
def test_latencies_equal_one_queue_fed_everything_in_stream_order(process_ms, speed):
    table, batches = _tuples(3000, seed=1)
    ordered = _stream_order(table, batches)
    whole = FifoQueueModel(1, process_ms, speed).add(np.zeros(len(ordered), np.int64),
                                                   ordered["event_time_ms"].to_numpy())  # fmt: skip
    # Three significant digits, as Python's own formatting rounds them.
    expected = pd.Series([float(f"{wait:.3g}") for wait in whole]).value_counts().sort_index()

    state, histograms = {}, []
    for number in range(4):  # one micro-batch after the other, rows handed over shuffled
        batch = table.filter(pa.array(batches == number))
        batch = batch.take(np.random.default_rng(number).permutation(batch.num_rows))
        _, waits, state = serve_tuples(batch, state, 15_000, process_ms, speed)
        assert list(state) == [3]
        histograms.append(waits.to_pandas())
    served = pd.concat(histograms).groupby("latency_ms")["tuples"].sum().sort_index()
    pd.testing.assert_series_equal(served, expected, check_names=False, check_index_type=False)


def test_window_partials_sum_counts_and_tuples_per_window_and_key():
    table, _ = _tuples(2000, seed=2, worker=5)
    partials, _, _ = serve_tuples(table, {}, 15_000, 1.0, 1.0)
    frame = table.to_pandas().assign(window=lambda f: f["event_time_ms"] // 15_000 * 15_000)
    expected = frame.groupby(["window", "key"]).agg(count=("count", "sum"), tuples=("count", "size"))
    actual = partials.to_pandas().set_index(["window_start_ms", "key"])
    assert (actual["worker"] == 5).all()
    assert (actual["window_end_ms"] - actual.index.get_level_values(0) == 15_000).all()
    pd.testing.assert_frame_equal(actual[["count", "tuples"]].sort_index(),
                                  expected.rename_axis(["window_start_ms", "key"]).sort_index(),
                                  check_dtype=False)  # fmt: skip


def test_each_windows_extremes_bound_its_tuples():
    table, _ = _tuples(1000, seed=3)
    _, waits, _ = serve_tuples(table, {}, 15_000, 1.0, 1.0)
    frame = waits.to_pandas()
    events = table.to_pandas().assign(window=lambda f: f["event_time_ms"] // 15_000 * 15_000)
    first = events.groupby("window")["event_time_ms"].min()
    per_window = frame.groupby("window_start_ms").agg(first=("first_event_ms", "first"),
                                                      last=("last_completion_ms", "first"),
                                                      longest=("latency_ms", "max"))  # fmt: skip
    assert per_window["first"].to_dict() == first.to_dict()
    # The last completion comes no earlier than the longest wait after the window's first event.
    assert (per_window["last"] >= per_window["longest"]).all()


def test_latency_buckets_keep_three_significant_digits_as_python_formats_them():
    rng = np.random.default_rng(7)
    waits = np.concatenate([[0.0, 0.25, 12.25, 999.5, 1_000.0], 10.0 ** rng.uniform(-4, 6, 5000)])
    expected = [float(f"{wait:.3g}") for wait in waits]
    assert latency_bucket(waits).tolist() == expected


def _group_input(table: pa.Table) -> pd.DataFrame:
    """One worker's tuples as the workers' step receives them: packed blocks of kind ``tuples``."""
    blocks = [pack(batch) for batch in table.to_batches(max_chunksize=400)]
    return pd.DataFrame({"kind": [TUPLES] * len(blocks), "rows": [400] * len(blocks),
                         "block": blocks})  # fmt: skip


@pytest.mark.parametrize("cpu_work", [False, True])
def test_physical_mode_spends_the_service_time_and_says_so(cpu_work):
    table, _ = _tuples(1000, seed=4, worker=2)
    serving = WorkerServing(15_000, 0.2, 1.0, "r", cpu_work=cpu_work)
    started = time.thread_time()
    out = serve_worker_group((2,), _group_input(table), serving, {}, batch_id=7)
    spent = time.thread_time() - started
    kinds = dict(zip(out["kind"], out["block"], strict=False))
    if not cpu_work:
        assert BUSY not in kinds
        assert spent < 0.2  # bookkeeping only: 1,000 tuples at 0.2 ms would be 0.2 s
        return
    busy = unpack([kinds[BUSY]], WORKER_BUSY_ARROW).to_pylist()
    # 1,000 tuples at 0.2 ms: at least 0.2 CPU-seconds, measured on the task's own thread.
    assert busy == [{"run_id": "r", "batch_id": 7, "worker": 2, "tuples": 1000,
                     "busy_s": pytest.approx(busy[0]["busy_s"]), "wall_s": busy[0]["wall_s"]}]  # fmt: skip
    assert 0.2 <= busy[0]["busy_s"] <= spent
    assert busy[0]["wall_s"] >= busy[0]["busy_s"] * 0.99
