"""Small hand-built gold tables for the report's tests: two runs, two windows each."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from core.tables import DeltaRsBackend
from core.warehouse import Warehouse

__all__ = ["gold_frames", "write_gold"]

METRIC_COLUMNS = ["workers", "tuples", "distinct_keys", "stddev_pct", "imbalance", "skew_s",
                  "e_lb", "dist_cost", "throughput", "p50_ms", "p99_ms", "makespan_ms"]  # fmt: skip


def _metric(run_id, scope, start, workers, imbalance, dist_cost, tuples=100):
    values = [workers, tuples, 5, imbalance * 50, imbalance, imbalance / 2, imbalance * 1.5,
              dist_cost, 1234.5678, 1.0, 2.0 + imbalance, 99.0]  # fmt: skip
    return {"run_id": run_id, "scope": scope, "window_start_ms": start,
            **dict(zip(METRIC_COLUMNS, values, strict=True))}  # fmt: skip


def gold_frames():
    metrics = pd.DataFrame([
        _metric("run-key", "cumulative", -1, 3, 0.2666666666666667, 1.0, 150),
        _metric("run-key", "window", 0, 3, 0.3, 1.0),
        _metric("run-key", "window", 60_000, 3, 0.2, 1.0, 50),
        _metric("run-dkg", "cumulative", -1, 3, 0.04, 1.6, 150),
        _metric("run-dkg", "window", 0, 3, 0.06, 1.4),
        _metric("run-dkg", "window", 60_000, 3, 0.01, 1.2, 50),
    ])  # fmt: skip
    loads = {"run-key": [[70, 20, 10], [30, 20, 0]], "run-dkg": [[35, 33, 32], [17, 16, 17]]}
    worker_load = pd.DataFrame([
        {"run_id": run, "window_start_ms": w * 60_000, "worker": worker, "tuples": t, "keys": 1}
        for run, windows in loads.items() for w, row in enumerate(windows)
        for worker, t in enumerate(row)
    ]).astype({"worker": "int32"})  # fmt: skip
    runs = pd.DataFrame([
        {"run_id": "run-key", "source": "COUNTRY_SKEW_R80", "grouping": "KEY", "label": "KEY",
         "workers": 3, "status": "succeeded", "started_at": pd.Timestamp("2026-01-01", tz="UTC")},
        {"run_id": "run-dkg", "source": "COUNTRY_SKEW_R80", "grouping": "DYNAMIC_KEY",
         "label": "DYNAMIC_KEY", "workers": 3, "status": "succeeded",
         "started_at": pd.Timestamp("2026-01-02", tz="UTC")},
    ])  # fmt: skip
    hot_keys = pd.DataFrame([
        ("run-dkg", 0, 15_000, "Turkey", 2), ("run-dkg", 1, 15_000, "Turkey", 3),
        ("run-dkg", 0, 30_000, "Turkey", 3), ("run-dkg", 0, 30_000, "Spain", 2),
        ("run-dkg", 1, 75_000, "Turkey", 2),
    ], columns=["run_id", "splitter", "as_of_ms", "key", "pool_size"]).assign(
        workers=lambda f: [[0, 1]] * len(f), estimated_share=0.5, reason="hot")  # fmt: skip
    return {"distribution_metrics": metrics, "worker_load": worker_load, "runs": runs,
            "hot_keys": hot_keys.astype({"splitter": "int32", "pool_size": "int32"})}  # fmt: skip


def write_gold(root: Path, frames: dict[str, pd.DataFrame]) -> Path:
    """The frames as gold Delta tables under the warehouse ``root``; returns the root."""
    warehouse = Warehouse(root)
    backend = DeltaRsBackend()
    for name, frame in frames.items():
        backend.append(warehouse.table_uri("gold", name), frame, "test", 0)
    return Path(warehouse.root)
