"""The gold refresh replay: one refresh per recorded worker windows commit, gold as silver says."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from bench.gold_refresh_bench import gold_digest, replay_refreshes
from core.config import RunConfig
from core.run_plan import RunPlan, query_id
from core.tables import DeltaRsBackend
from core.warehouse import Warehouse
from silver.schemas import SNAPSHOTS_ARROW
from silver.workers import WORKER_LATENCY_ARROW, WORKER_WINDOWS_ARROW

SPEC = RunPlan(run_id="r", source_type="ZIPF", grouping="KEY", splitters=1, run=RunConfig(workers=3))


def _record(warehouse: Warehouse, batches: int) -> pa.Table:
    backend, rng, every = DeltaRsBackend(), np.random.default_rng(3), []
    backend.create_if_missing(warehouse.table_uri("silver", "routing_snapshots"), SNAPSHOTS_ARROW)
    for batch in range(batches):
        rows = 50
        starts = rng.integers(0, 3, rows) * 60_000
        workers = rng.integers(0, 3, rows).astype(np.int32)
        windows = pa.table({
            "run_id": ["r"] * rows, "batch_id": [batch] * rows, "window_start_ms": starts,
            "worker": workers, "key": [f"k{k}" for k in rng.integers(0, 9, rows)],
            "count": rng.integers(1, 5, rows), "tuples": rng.integers(1, 5, rows),
            "window_end_ms": starts + 15_000,
        }, schema=WORKER_WINDOWS_ARROW)  # fmt: skip
        latency = pa.table({
            "run_id": ["r"] * rows, "batch_id": [batch] * rows, "window_start_ms": starts,
            "worker": workers, "latency_ms": rng.integers(1, 9, rows).astype(float),
            "tuples": rng.integers(1, 5, rows), "first_event_ms": starts,
            "last_completion_ms": rng.uniform(1, 100, rows),
        }, schema=WORKER_LATENCY_ARROW)  # fmt: skip
        backend.append(warehouse.table_uri("silver", "worker_latency"), latency, query_id(SPEC.run_id, "silver"), batch)
        backend.append(warehouse.table_uri("silver", "worker_windows"), windows, query_id(SPEC.run_id, "silver"), batch)
        every.append(windows)
    return pa.concat_tables(every)


def test_replay_refreshes_after_each_windows_commit_and_gold_holds_silvers_counts(tmp_path):
    recorded, replay = Warehouse(tmp_path / "recorded"), Warehouse(tmp_path / "replay")
    windows = _record(recorded, 4).to_pandas()

    cpu_ms = replay_refreshes(recorded, replay, SPEC)

    assert len(cpu_ms) == 4 and all(ms > 0 for ms in cpu_ms)
    counts = DeltaRsBackend().read(replay.table_uri("gold", "key_counts")).to_pandas()
    got = counts.groupby(["window_start_ms", "key"])["count"].sum().to_dict()
    assert got == windows.groupby(["window_start_ms", "key"])["count"].sum().to_dict()
    # Replayed again, the same recording publishes the same rows (what compares two codes).
    again = Warehouse(tmp_path / "again")
    replay_refreshes(recorded, again, SPEC)
    assert gold_digest(again, "r") == gold_digest(replay, "r")
    assert gold_digest(replay, "r")["hot_keys"] == "no table"  # KEY has no hot keys
    shorter, short_replay = Warehouse(tmp_path / "shorter"), Warehouse(tmp_path / "short-replay")
    _record(shorter, 3)  # the same first three batches
    replay_refreshes(shorter, short_replay, SPEC)
    assert gold_digest(short_replay, "r")["key_counts"] != gold_digest(replay, "r")["key_counts"]
