from __future__ import annotations

import pandas as pd
import pytest

from gold.transforms import distribution_metrics, key_counts, worker_load


def _routed(rows):
    frame = pd.DataFrame(rows, columns=["key", "count", "event_time_ms", "worker"])
    return frame.assign(run_id="r", partition=0, offset=range(len(frame)), tuple_index=0)


ROUTED = _routed([
    ("a", 2, 0, 0), ("a", 3, 10, 1), ("b", 1, 20, 1), ("a", 1, 70_000, 0),
    ("bad", None, None, -1),
])  # fmt: skip


def _partials(routed):
    from silver.windows import worker_window_partials

    return worker_window_partials(routed.dropna(subset=["event_time_ms"]), 15_000)


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


def test_distribution_metrics_cumulative_and_windows():
    table = distribution_metrics(ROUTED.dropna(subset=["event_time_ms"]), workers=2,
                                 processing_seconds=2.0)  # fmt: skip
    cumulative = table[table["scope"] == "cumulative"].iloc[0]
    assert cumulative["tuples"] == 4
    assert cumulative["imbalance"] == pytest.approx(0.0)  # loads [2, 2]
    assert cumulative["dist_cost"] == pytest.approx(3 / 2)  # (a,0) (a,1) (b,1)
    assert cumulative["throughput"] == pytest.approx(2.0)
    assert table[table["scope"] == "window"]["window_start_ms"].tolist() == [0, 60_000]


def test_gold_metrics_equal_the_simulators():
    from bronze.datasets.base import DatasetSpec
    from bronze.datasets.registry import make_dataset
    from pipelines.simulate import GroupingChoice, SimulationSettings, simulate
    from silver.groupings.registry import make_grouping

    batch = next(make_dataset(DatasetSpec(messages=5000, seed=4)).tuples(batch_size=5000))
    choice = GroupingChoice("DYNAMIC_KEY", "DYNAMIC_KEY")
    simulated = simulate([batch], [choice], SimulationSettings(workers=6))[0].metrics.cumulative
    workers = make_grouping("DYNAMIC_KEY", 6).route(batch.keys, batch.event_times_ms)
    routed = pd.DataFrame({"run_id": "r", "partition": 0, "offset": range(len(batch)),
                           "tuple_index": 0, "key": batch.keys, "count": batch.counts,
                           "event_time_ms": batch.event_times_ms, "worker": workers})  # fmt: skip
    gold = distribution_metrics(routed, workers=6, processing_seconds=1.0).iloc[0]
    for column in ("imbalance", "stddev_pct", "skew_s", "e_lb", "dist_cost", "p50_ms", "p99_ms",
                   "makespan_ms", "distinct_keys", "tuples"):  # fmt: skip
        assert gold[column] == pytest.approx(getattr(simulated, column)), column
