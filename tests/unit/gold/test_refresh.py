"""Gold refresh: nothing is published before the run has worker windows; rebuilt windows replace theirs."""

from __future__ import annotations

import shutil

import numpy as np
import pandas as pd
import pyarrow as pa

from core.config import RunConfig
from core.run_plan import RunPlan, query_id
from core.tables import DeltaRsBackend
from core.warehouse import Warehouse
from gold.refresh import partials_feed, refresh_gold
from silver.groupings.base import Grouping
from silver.groupings.registry import grouping_class
from silver.schemas import SNAPSHOTS_ARROW
from silver.workers import WORKER_LATENCY_ARROW, WORKER_WINDOWS_ARROW


def _windows(run_id: str, rows: int) -> pa.Table:
    return pa.table({
        "run_id": [run_id] * rows, "batch_id": [0] * rows, "window_start_ms": [0] * rows,
        "worker": range(rows), "key": [f"k{i}" for i in range(rows)], "count": [2] * rows,
        "tuples": [1] * rows, "window_end_ms": [15_000] * rows,
    }, schema=WORKER_WINDOWS_ARROW)  # fmt: skip


def _latency(run_id: str, rows: int) -> pa.Table:
    return pa.table({
        "run_id": [run_id] * rows, "batch_id": [0] * rows, "window_start_ms": [0] * rows,
        "worker": range(rows), "latency_ms": [1.0] * rows, "tuples": [1] * rows,
        "first_event_ms": [0] * rows, "last_completion_ms": [1.0] * rows,
    }, schema=WORKER_LATENCY_ARROW)  # fmt: skip


def test_gold_waits_for_the_runs_first_worker_windows(tmp_path) -> None:
    backend, warehouse = DeltaRsBackend(), Warehouse(tmp_path)
    windows = warehouse.table_uri("silver", "worker_windows")
    latency = warehouse.table_uri("silver", "worker_latency")
    settings = RunPlan(run_id="r", source_type="ZIPF", grouping="KEY", splitters=1, run=RunConfig(workers=3))
    # The tables exist (a stage started on empty input) but hold only another run.
    backend.append(latency, _latency("other-run", 2), query_id("other-run", "silver"), 0)
    backend.append(windows, _windows("other-run", 2), query_id("other-run", "silver"), 0)

    assert not refresh_gold(backend, warehouse, settings, 1.0)
    assert backend.version(warehouse.table_uri("gold", "key_counts")) is None

    backend.append(latency, _latency("r", 3), query_id("r", "silver"), 0)
    backend.append(windows, _windows("r", 3), query_id("r", "silver"), 0)
    backend.create_if_missing(warehouse.table_uri("silver", "routing_snapshots"), SNAPSHOTS_ARROW)
    assert refresh_gold(backend, warehouse, settings, 1.0)
    counts = backend.read(warehouse.table_uri("gold", "key_counts")).to_pandas()
    assert sorted(counts["key"]) == ["k0", "k1", "k2"] and counts["count"].tolist() == [2, 2, 2]
    metrics = backend.read(warehouse.table_uri("gold", "distribution_metrics")).to_pandas()
    assert metrics.loc[metrics["scope"] == "cumulative", "p50_ms"].tolist() == [1.0]
    # The whole run's row sits in partition window_start_ms=-1: a real value, never null.
    assert metrics.loc[metrics["scope"] == "cumulative", "window_start_ms"].tolist() == [-1]


def _partials(run_id: str, batch_id: int, rows: int, seed: int) -> tuple[pa.Table, pa.Table]:
    rng = np.random.default_rng(seed)
    starts = (rng.integers(0, 3, rows) + batch_id) * 15_000  # windows overlap from batch to batch
    workers = rng.integers(0, 3, rows).astype(np.int32)
    windows = pa.table({
        "run_id": [run_id] * rows, "batch_id": [batch_id] * rows, "window_start_ms": starts,
        "worker": workers, "key": [f"k{k}" for k in rng.integers(0, 20, rows)],
        "count": rng.integers(1, 5, rows), "tuples": rng.integers(1, 5, rows),
        "window_end_ms": starts + 15_000,
    }, schema=WORKER_WINDOWS_ARROW)  # fmt: skip
    latency = pa.table({
        "run_id": [run_id] * rows, "batch_id": [batch_id] * rows, "window_start_ms": starts,
        "worker": workers, "latency_ms": rng.integers(1, 9, rows).astype(float),
        "tuples": rng.integers(1, 5, rows), "first_event_ms": starts,
        "last_completion_ms": rng.uniform(1, 100, rows),
    }, schema=WORKER_LATENCY_ARROW)  # fmt: skip
    return windows, latency


def _expected_key_counts(windows: pd.DataFrame, run_id: str) -> pd.DataFrame:
    rows = windows[windows["run_id"] == run_id].assign(
        window_start_ms=lambda f: f["window_start_ms"] // 60_000 * 60_000)
    return rows.groupby(["window_start_ms", "key"], as_index=False)[["count", "tuples"]].sum()


def test_refreshes_replace_the_windows_they_rebuild(tmp_path) -> None:
    backend, warehouse = DeltaRsBackend(), Warehouse(tmp_path)
    silver = {name: warehouse.table_uri("silver", name) for name in ("worker_windows",
                                                                      "worker_latency")}  # fmt: skip
    backend.create_if_missing(warehouse.table_uri("silver", "routing_snapshots"), SNAPSHOTS_ARROW)
    runs = {name: RunPlan(run_id=name, source_type="ZIPF", grouping="KEY", splitters=1, run=RunConfig(workers=3))
            for name in ("r", "other")}  # fmt: skip
    feeds = {name: partials_feed(warehouse, spec) for name, spec in runs.items()}
    for batch in range(6):  # every aggregation window is rebuilt by several refreshes
        for seed, name in enumerate(runs):
            windows, latency = _partials(name, batch, 40, seed=10 * batch + seed)
            backend.append(silver["worker_latency"], latency, query_id(name, "silver"), batch)
            backend.append(silver["worker_windows"], windows, query_id(name, "silver"), batch)
            assert refresh_gold(backend, warehouse, runs[name], 1.0, feeds[name])
    # A restarted job's first refresh (a fresh feed) after more partials rebuilds from the start.
    windows, latency = _partials("r", 6, 40, seed=99)
    backend.append(silver["worker_latency"], latency, query_id("r", "silver"), 6)
    backend.append(silver["worker_windows"], windows, query_id("r", "silver"), 6)
    assert refresh_gold(backend, warehouse, runs["r"], 1.0)

    every = backend.read(silver["worker_windows"]).to_pandas()
    counts = backend.read(warehouse.table_uri("gold", "key_counts")).to_pandas()
    for name in runs:
        got = counts[counts["run_id"] == name][["window_start_ms", "key", "count", "tuples"]]
        pd.testing.assert_frame_equal(
            got.sort_values(["window_start_ms", "key"]).reset_index(drop=True),
            _expected_key_counts(every, name), check_dtype=False)  # fmt: skip
    metrics = backend.read(warehouse.table_uri("gold", "distribution_metrics")).to_pandas()
    cumulative = metrics[metrics["scope"] == "cumulative"].set_index("run_id")["tuples"]
    assert cumulative.to_dict() == every.groupby("run_id")["tuples"].sum().to_dict()
    # Each refresh replaced the whole run's row in its partition rather than adding one.
    assert metrics.loc[metrics["scope"] == "cumulative", "window_start_ms"].eq(-1).all()
    assert not metrics.duplicated(["run_id", "scope", "window_start_ms"]).any()
    loads = backend.read(warehouse.table_uri("gold", "worker_load")).to_pandas()
    assert not loads.duplicated(["run_id", "window_start_ms", "worker"]).any()
    assert loads.groupby("run_id")["tuples"].sum().to_dict() == cumulative.to_dict()


def _snapshots(run_id: str, batch: int, router: Grouping, rng: np.random.Generator) -> pa.Table:
    keys = [f"k{k}" for k in rng.zipf(1.3, 2_000) % 50]  # a few keys hot enough to spread
    router.route(keys, np.full(len(keys), batch * 15_000))
    return pa.table({"run_id": [run_id], "splitter": pa.array([0], pa.int32()),
                     "event_time_ms": [batch * 15_000], "state": [router.snapshot()]},
                    schema=SNAPSHOTS_ARROW)  # fmt: skip


def _gold(warehouse: Warehouse, table: str, order: list[str]) -> pd.DataFrame:
    rows = DeltaRsBackend().read(warehouse.table_uri("gold", table)).to_pandas()
    # A window's throughput is the run's as of the refresh that last published it.
    rows = rows.drop(columns=["throughput"], errors="ignore")
    return rows.sort_values(order).reset_index(drop=True)[sorted(rows.columns)]


def test_a_refresh_after_every_commit_ends_equal_to_one_refresh_from_scratch(tmp_path) -> None:
    backend, live = DeltaRsBackend(), Warehouse(tmp_path / "live")
    spec = RunPlan(run_id="r", source_type="ZIPF", grouping="DYNAMIC_KEY", splitters=1, run=RunConfig(workers=3))
    silver = {name: live.table_uri("silver", name)
              for name in ("worker_windows", "worker_latency", "routing_snapshots")}  # fmt: skip
    feed, rng = partials_feed(live, spec), np.random.default_rng(7)
    router = grouping_class("DYNAMIC_KEY")(spec.workers)
    for batch in range(12):
        windows, latency = _partials("r", batch, 30, seed=batch)
        # Late partials too: a window released after it was published is reached again.
        late = rng.integers(0, batch + 1, 30) * 60_000
        windows = windows.set_column(2, "window_start_ms", pa.array(late))
        latency = latency.set_column(2, "window_start_ms", pa.array(late))
        backend.append(silver["worker_latency"], latency, query_id("r", "silver"), batch)
        backend.append(silver["routing_snapshots"], _snapshots("r", batch, router, rng), "routing",
                       batch)  # fmt: skip
        backend.append(silver["worker_windows"], windows, query_id("r", "silver"), batch)
        assert refresh_gold(backend, live, spec, 1.0 + batch, feed)
    scratch = Warehouse(tmp_path / "scratch")
    shutil.copytree(tmp_path / "live" / "silver", tmp_path / "scratch" / "silver")
    assert refresh_gold(DeltaRsBackend(), scratch, spec, 12.0)

    orders = {"key_counts": ["window_start_ms", "key"], "worker_load": ["window_start_ms", "worker"],
              "distribution_metrics": ["window_start_ms"],
              "hot_keys": ["as_of_ms", "splitter", "key"]}  # fmt: skip
    for table, order in orders.items():
        pd.testing.assert_frame_equal(_gold(live, table, order), _gold(scratch, table, order))
    assert len(_gold(live, "hot_keys", orders["hot_keys"])) > 0  # the snapshots had hot keys
    every = backend.read(silver["worker_windows"]).to_pandas()
    counts = _gold(live, "key_counts", orders["key_counts"])[["window_start_ms", "key", "count",
                                                              "tuples"]]  # fmt: skip
    pd.testing.assert_frame_equal(counts, _expected_key_counts(every, "r"), check_dtype=False)
