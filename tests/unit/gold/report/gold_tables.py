"""Small hand-built gold tables for the report's tests: two runs, two windows each.

The queue model's numbers are consistent with the loads: 1 s of service per
tuple (``process_ms`` 1000) at speed 1, so a worker is busy tuples / 60 of a
60 s window, and capacity is 1000 M / (process_ms max load).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from core.tables import DeltaRsBackend
from core.warehouse import Warehouse

__all__ = ["gold_frames", "write_gold"]

METRIC_COLUMNS = ["workers", "tuples", "distinct_keys", "stddev_pct", "imbalance", "skew_s",
                  "e_lb", "dist_cost", "throughput", "p50_ms", "p99_ms", "makespan_ms",
                  "capacity", "capacity_vs_key"]  # fmt: skip


def _metric(run_id, scope, start, workers, imbalance, dist_cost, tuples=100, peak=70, key_peak=70):
    capacity = tuples / peak  # per second: 1000 * tuples / (process_ms 1000 * peak)
    values = [workers, tuples, 5, imbalance * 50, imbalance, imbalance / 2, imbalance * 1.5,
              dist_cost, 1234.5678, 1000.0 + 10 * imbalance, 2000.0 + 1000 * imbalance, 99.0,
              capacity, key_peak / peak]  # fmt: skip
    return {"run_id": run_id, "scope": scope, "window_start_ms": start,
            **dict(zip(METRIC_COLUMNS, values, strict=True))}  # fmt: skip


def gold_frames():
    metrics = pd.DataFrame([
        _metric("run-key", "cumulative", -1, 3, 0.2666666666666667, 1.0, 150, 100, 100),
        _metric("run-key", "window", 0, 3, 0.3, 1.0),
        _metric("run-key", "window", 60_000, 3, 0.2, 1.0, 50, 30, 30),
        _metric("run-dkg", "cumulative", -1, 3, 0.04, 1.6, 150, 52, 100),
        _metric("run-dkg", "window", 0, 3, 0.06, 1.4, 100, 35, 70),
        _metric("run-dkg", "window", 60_000, 3, 0.01, 1.2, 50, 17, 30),
    ])  # fmt: skip
    loads = {"run-key": [[70, 20, 10], [30, 20, 0]], "run-dkg": [[35, 33, 32], [17, 16, 17]]}
    worker_load = pd.DataFrame([
        {"run_id": run, "window_start_ms": w * 60_000, "worker": worker, "tuples": t, "keys": 1}
        for run, windows in loads.items() for w, row in enumerate(windows)
        for worker, t in enumerate(row)
    ]).astype({"worker": "int32"})  # fmt: skip
    runs = pd.DataFrame([
        {"run_id": "run-key", "source": "COUNTRY_SKEW_R80", "grouping": "KEY", "label": "KEY",
         "workers": 3, "load": 0.8, "speed": 1.0, "process_ms": 1000.0, "work": "model",
         "status": "succeeded", "started_at": pd.Timestamp("2026-01-01", tz="UTC")},
        {"run_id": "run-dkg", "source": "COUNTRY_SKEW_R80", "grouping": "DYNAMIC_KEY",
         "label": "DYNAMIC_KEY", "workers": 3, "load": 0.8, "speed": 1.0, "process_ms": 1000.0,
         "work": "cpu", "status": "succeeded", "started_at": pd.Timestamp("2026-01-02", tz="UTC")},
    ])  # fmt: skip
    # Only the physical-mode run (work=cpu) measures busy time: two micro-batches.
    worker_busy = pd.DataFrame([
        ("run-dkg", 0, 0, 35, 0.50, 0.61), ("run-dkg", 0, 1, 33, 0.40, 0.52),
        ("run-dkg", 0, 2, 32, 0.30, 0.45), ("run-dkg", 1, 0, 17, 0.20, 0.30),
        ("run-dkg", 1, 2, 17, 0.25, 0.33),
    ], columns=["run_id", "batch_id", "worker", "tuples", "busy_s", "wall_s"]).astype(
        {"batch_id": "int64", "worker": "int32", "tuples": "int64"})  # fmt: skip
    hot_keys = pd.DataFrame([
        ("run-dkg", 0, 15_000, "Turkey", 2), ("run-dkg", 1, 15_000, "Turkey", 3),
        ("run-dkg", 0, 30_000, "Turkey", 3), ("run-dkg", 0, 30_000, "Spain", 2),
        ("run-dkg", 1, 75_000, "Turkey", 2),
    ], columns=["run_id", "splitter", "as_of_ms", "key", "pool_size"]).assign(
        workers=lambda f: [[0, 1]] * len(f), estimated_share=0.5, reason="hot")  # fmt: skip
    return {"distribution_metrics": metrics, "worker_load": worker_load, "runs": runs,
            "hot_keys": hot_keys.astype({"splitter": "int32", "pool_size": "int32"}),
            "worker_busy": worker_busy}  # fmt: skip


def write_gold(root: Path, frames: dict[str, pd.DataFrame]) -> Path:
    """The frames as gold Delta tables under the warehouse ``root``; returns the root."""
    warehouse = Warehouse(root)
    backend = DeltaRsBackend()
    for name, frame in frames.items():
        backend.append(warehouse.table_uri("gold", name), frame, "test", 0)
    return Path(warehouse.root)
