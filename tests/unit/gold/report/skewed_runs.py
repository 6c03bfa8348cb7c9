"""Hand-built gold frames of three runs over one skewed stream, for the queue model's figures.

W=2 workers, 0.5 ms of service per tuple, event time 4x faster than the wall
clock, 60 s windows from 2026-01-01 00:00 UTC: a 60 s window lasts 15 s of wall
time, so a worker is busy tuples * 0.5 * 4 / 60000 = tuples / 30000 of it.
Every run routes the same 48,000 tuples a window (192,000 in all). KEY's worker
0 gets 28,000, 28,500, 31,500 then 33,000 of them: it saturates in the third
window (minute 2). PARTIAL_KEY splits them evenly, DYNAMIC_KEY nearly so.
"""

from __future__ import annotations

import pandas as pd

__all__ = ["DIST_COST", "GROUPINGS", "LOAD", "LOADS", "P99_MS", "PROCESS_MS", "SPEED", "START_MS",
           "WINDOW_MS", "WORKERS", "capacity", "skewed_frames"]  # fmt: skip

START_MS = 1_767_225_600_000  # 2026-01-01T00:00:00Z
WINDOW_MS = 60_000
WORKERS = 2
PROCESS_MS = 0.5
SPEED = 4.0
LOAD = 0.8  # offered: 0.8 x 2 x 1000 / 0.5 = 3,200 tuples/s

LOADS = {
    "run-key": [(28_000, 20_000), (28_500, 19_500), (31_500, 16_500), (33_000, 15_000)],
    "run-pkg": [(24_000, 24_000)] * 4,
    "run-dkg": [(24_300, 23_700)] * 4,
}
"""Tuples per (window, worker)."""

P99_MS = {"run-key": [3.1, 4.2, 900.0, 41_234.0], "run-pkg": [2.2, 2.4, 2.3, 2.1],
          "run-dkg": [1.9, 2.0, 1.95, 1.8]}  # fmt: skip
DIST_COST = {"run-key": 1.0, "run-pkg": 2.0, "run-dkg": 1.04}
GROUPINGS = {"run-key": "KEY", "run-pkg": "PARTIAL_KEY", "run-dkg": "DYNAMIC_KEY"}


def capacity(loads: list[tuple[int, ...]]) -> float:
    """Gold's definition, by hand: 1000 M / (process_ms x the busiest worker's tuples)."""
    per_worker = [sum(window[w] for window in loads) for w in range(WORKERS)]
    return 1000 * sum(per_worker) / (PROCESS_MS * max(per_worker))


def _metric(run_id: str, scope: str, start: int, p99: float) -> dict:
    loads = LOADS[run_id] if scope == "cumulative" else [LOADS[run_id][start // WINDOW_MS]]
    own, key = capacity(loads), capacity(LOADS["run-key"] if scope == "cumulative"
                                         else [LOADS["run-key"][start // WINDOW_MS]])  # fmt: skip
    return {"run_id": run_id, "scope": scope,
            "window_start_ms": -1 if scope == "cumulative" else START_MS + start,
            "workers": WORKERS, "tuples": sum(map(sum, loads)), "distinct_keys": 10,
            "stddev_pct": 1.0, "imbalance": 0.1, "skew_s": 0.1, "e_lb": 0.1,
            "dist_cost": DIST_COST[run_id], "throughput": 5000.0, "p50_ms": 1.0, "p99_ms": p99,
            "makespan_ms": 60_000.0, "capacity": own, "capacity_vs_key": own / key}  # fmt: skip


def skewed_frames() -> dict[str, pd.DataFrame]:
    """``gold.distribution_metrics``, ``gold.worker_load`` and ``gold.runs`` of the three runs."""
    metrics = pd.DataFrame(
        [_metric(run, "cumulative", -1, max(P99_MS[run])) for run in LOADS]
        + [_metric(run, "window", i * WINDOW_MS, p99) for run in LOADS
           for i, p99 in enumerate(P99_MS[run])]
    )  # fmt: skip
    worker_load = pd.DataFrame([
        {"run_id": run, "window_start_ms": START_MS + i * WINDOW_MS, "worker": w, "tuples": t,
         "keys": 5}
        for run, windows in LOADS.items() for i, row in enumerate(windows)
        for w, t in enumerate(row)
    ]).astype({"worker": "int32"})  # fmt: skip
    runs = pd.DataFrame([
        {"run_id": run, "source": "COUNTRY_SKEW_R80", "grouping": grouping, "label": grouping,
         "workers": WORKERS, "load": LOAD, "speed": SPEED, "process_ms": PROCESS_MS,
         "work": "model", "status": "succeeded",
         "started_at": pd.Timestamp("2026-01-01", tz="UTC") + pd.Timedelta(minutes=i)}
        for i, (run, grouping) in enumerate(GROUPINGS.items())
    ])  # fmt: skip
    return {"distribution_metrics": metrics, "worker_load": worker_load, "runs": runs}
