"""Gold refresh: nothing is published before the run has worker windows."""

from __future__ import annotations

import pyarrow as pa

from core.run_spec import RunSpec
from core.tables import DeltaRsBackend
from core.warehouse import Warehouse
from gold.refresh import refresh_gold
from silver.sink import SNAPSHOTS_ARROW
from silver.worker_query import WORKER_LATENCY_ARROW, WORKER_WINDOWS_ARROW


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
    settings = RunSpec(run_id="r", source_type="ZIPF", grouping="KEY", workers=3, splitters=1)
    # The tables exist (a stage started on empty input) but hold only another run.
    backend.append(latency, _latency("other-run", 2), "workers", 0)
    backend.append(windows, _windows("other-run", 2), "workers", 0)

    assert not refresh_gold(backend, warehouse, settings, 1.0)
    assert backend.version(warehouse.table_uri("gold", "key_counts")) is None

    backend.append(latency, _latency("r", 3), "workers", 1)
    backend.append(windows, _windows("r", 3), "workers", 1)
    backend.create_if_missing(warehouse.table_uri("silver", "routing_snapshots"), SNAPSHOTS_ARROW)
    assert refresh_gold(backend, warehouse, settings, 1.0)
    counts = backend.read(warehouse.table_uri("gold", "key_counts")).to_pandas()
    assert sorted(counts["key"]) == ["k0", "k1", "k2"] and counts["count"].tolist() == [2, 2, 2]
    metrics = backend.read(warehouse.table_uri("gold", "distribution_metrics")).to_pandas()
    assert metrics.loc[metrics["scope"] == "cumulative", "p50_ms"].tolist() == [1.0]
