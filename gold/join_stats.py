"""Gold for the join: per-window match rate, join latency, late and unmatched counts.

A restart replays at least once, so ``silver.joined`` can hold a left id twice
(say, once unmatched and once matched, as the seed describes). Gold keeps one
row per left id, preferring the matched one, then the earliest batch.

Latency is in event time: ``clock_ms`` is the largest creation time the join
had seen when it emitted the row, so ``clock_ms - max(left, right creation)``
is how far behind the stream a pair came out (sync-delay and batching add to
it); it is deterministic for a replay, unlike the wall clock.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import numpy as np
import pandas as pd
import pyarrow.compute as pc

from pipelines.core.paths import Warehouse
from pipelines.core.tables.base import TableBackend

__all__ = ["STATS_COLUMNS", "dedup_joined", "join_window_stats", "refresh_join_gold"]

logger = logging.getLogger(__name__)

STATS_COLUMNS = ["run_id", "scope", "window_start_ms", "lefts", "matched", "unmatched",
                 "match_rate", "latency_p50_ms", "latency_p99_ms", "late_rights", "orphan_rights",
                 "duplicates_removed", "quarantined"]  # fmt: skip
CUMULATIVE_WINDOW = -1
"""``window_start_ms`` of the cumulative row (a real value, so MERGE can match it)."""


def dedup_joined(joined: pd.DataFrame) -> pd.DataFrame:
    """One row per left id: the matched one if any, else the earliest."""
    rank = (joined["record"] != "matched").astype(np.int8)
    ordered = joined.assign(_rank=rank).sort_values(["id", "_rank", "batch_id"], kind="stable")
    return ordered.drop_duplicates("id").drop(columns="_rank").reset_index(drop=True)


def _summary(rows: pd.DataFrame, raw_rows: int, rejects: pd.DataFrame) -> dict[str, Any]:
    matched = rows["record"] == "matched"
    latency = (rows["clock_ms"] - rows[["left_created_ms", "right_created_ms"]].max(axis=1))[matched]
    lefts = len(rows)
    kinds = rejects["record"].value_counts()
    return {"lefts": lefts, "matched": int(matched.sum()), "unmatched": int((~matched).sum()),
            "match_rate": float(matched.mean()) if lefts else float("nan"),
            "latency_p50_ms": float(latency.quantile(0.5)) if len(latency) else float("nan"),
            "latency_p99_ms": float(latency.quantile(0.99)) if len(latency) else float("nan"),
            "late_rights": int(kinds.get("late_right", 0)),
            "orphan_rights": int(kinds.get("orphan_right", 0)),
            "duplicates_removed": raw_rows - lefts,
            "quarantined": int(kinds.get("quarantine", 0))}  # fmt: skip


def join_window_stats(joined: pd.DataFrame, rejects: pd.DataFrame, window_ms: int,
                      run_id: str) -> pd.DataFrame:  # fmt: skip
    """Per-window rows (windows of left creation time; rights by their own) and a cumulative row."""
    unique = dedup_joined(joined)
    left_window = joined["left_created_ms"] // window_ms * window_ms
    unique_window = unique["left_created_ms"] // window_ms * window_ms
    reject_window = rejects["right_created_ms"] // window_ms * window_ms
    rows = []
    for start in sorted(set(unique_window.dropna().astype(np.int64)) |
                        set(reject_window.dropna().astype(np.int64))):  # fmt: skip
        raw = int((left_window == start).sum())
        rows.append({"scope": "window", "window_start_ms": int(start),
                     **_summary(unique[unique_window == start], raw,
                                rejects[reject_window == start])})  # fmt: skip
    rows.append({"scope": "cumulative", "window_start_ms": CUMULATIVE_WINDOW,
                 **_summary(unique, len(joined), rejects)})  # fmt: skip
    return pd.DataFrame(rows).assign(run_id=run_id)[STATS_COLUMNS]


def _read(backend: TableBackend, warehouse: Warehouse, table: str, run_id: str) -> pd.DataFrame:
    path = warehouse.table_path("silver", table)
    if backend.version(path) is None:
        return pd.DataFrame(columns=["record", "id", "left_created_ms", "right_created_ms",
                                     "clock_ms", "batch_id"])  # fmt: skip
    data = backend.read(path)
    return data.filter(pc.equal(data["run_id"], run_id)).to_pandas()


def refresh_join_gold(backend: TableBackend, warehouse: Warehouse, run_id: str,
                      window_ms: int) -> dict[str, Any]:  # fmt: skip
    """Rebuild ``gold.join_stats`` for ``run_id`` from silver; returns the cumulative row."""
    joined = _read(backend, warehouse, "joined", run_id)
    rejects = _read(backend, warehouse, "join_rejects", run_id)
    stats = join_window_stats(joined, rejects, window_ms, run_id)
    backend.merge(warehouse.table_path("gold", "join_stats"), stats,
                  ["run_id", "scope", "window_start_ms"], f"{run_id}-gold",
                  time.time_ns() // 1_000)  # fmt: skip
    cumulative = stats[stats["scope"] == "cumulative"].iloc[0].to_dict()
    logger.info("gold.join_stats for %s: %s", run_id, cumulative)
    return cumulative
