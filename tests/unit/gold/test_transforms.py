from __future__ import annotations

import pandas as pd
import pytest

from gold.transforms import key_counts, worker_load


def _routed(rows):
    frame = pd.DataFrame(rows, columns=["key", "count", "event_time_ms", "worker"])
    return frame.assign(run_id="r", partition=0, offset=range(len(frame)), tuple_index=0)


ROUTED = _routed([
    ("a", 2, 0, 0), ("a", 3, 10, 1), ("b", 1, 20, 1), ("a", 1, 70_000, 0),
    ("bad", None, None, -1),
])  # fmt: skip


def _partials(routed):
    """The workers' window partials of ``routed``, as ``silver.worker_windows`` holds them."""
    tuples = routed.dropna(subset=["event_time_ms"]).astype({"event_time_ms": "int64"})
    start = tuples["event_time_ms"] // 15_000 * 15_000
    return (tuples.assign(window_start_ms=start)
            .groupby(["run_id", "window_start_ms", "worker", "key"])
            .agg(count=("count", "sum"), tuples=("count", "size")).reset_index())  # fmt: skip


def test_key_counts_merge_partials_across_workers():
    table = key_counts(_partials(ROUTED), window_ms=60_000)
    rows = {(r.window_start_ms, r.key): (r.count, r.tuples, r.workers) for r in table.itertuples()}
    assert rows == {(0, "a"): (5, 2, 2), (0, "b"): (1, 1, 1), (60_000, "a"): (1, 1, 1)}


def test_worker_load_lists_every_worker_of_each_window():
    table = worker_load(_partials(ROUTED), workers=3)
    first = table[table["window_start_ms"] == 0].sort_values("worker")
    assert first["tuples"].tolist() == [1, 2, 0]
    assert first["keys"].tolist() == [1, 2, 0]
    assert table["tuples"].sum() == 4


def test_gold_metrics_equal_the_simulators():
    import pyarrow as pa

    from bronze.datasets.base import DatasetSpec
    from bronze.datasets.registry import make_dataset
    from gold.metrics.partials import RunPartials
    from pipelines.simulate import GroupingChoice, SimulationSettings, simulate
    from silver.groupings.registry import make_grouping
    from silver.workers import WORKER_INPUT_ARROW, serve_worker

    batch = next(make_dataset(DatasetSpec(messages=5000, seed=4)).tuples(batch_size=5000))
    choice = GroupingChoice("DYNAMIC_KEY", "DYNAMIC_KEY")
    simulated = simulate([batch], [choice], SimulationSettings(workers=6))[0].metrics.cumulative
    workers = make_grouping("DYNAMIC_KEY", 6).route(batch.keys, batch.event_times_ms)
    routed = pa.table({"version": [0] * len(batch), "event_time_ms": batch.event_times_ms,
                       "partition": [0] * len(batch), "offset": range(len(batch)),
                       "tuple_index": [0] * len(batch), "key": batch.keys.astype(str),
                       "count": batch.counts, "worker": workers}, schema=WORKER_INPUT_ARROW)  # fmt: skip
    partials = RunPartials(6, 60_000, 1.0)
    for worker in range(6):
        rows = routed.filter(pa.compute.equal(routed["worker"], worker))
        if rows.num_rows:
            windows, waits, _ = serve_worker(rows, None, 15_000, 1.0, 1.0)
            partials.add_windows(windows.to_pandas())
            partials.add_latency(waits.to_pandas())
    gold = partials.result(1.0).cumulative
    for column in ("imbalance", "stddev_pct", "skew_s", "e_lb", "dist_cost", "p50_ms", "p99_ms",
                   "makespan_ms", "distinct_keys", "tuples"):  # fmt: skip
        assert getattr(gold, column) == pytest.approx(getattr(simulated, column)), column
