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

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from core.logs import figures
from core.run_plan import query_id
from core.tables.base import TableBackend
from core.warehouse import TableName, Warehouse, sql_name
from core.windows import window_start
from gold.schemas import CUMULATIVE_WINDOW_START_MS, JOIN_STATS
from silver.schemas import JOIN_REJECTS, JOINED

__all__ = ["STATS_COLUMNS", "dedup_joined", "join_window_stats", "refresh_join_gold"]

logger = logging.getLogger(__name__)

STATS_COLUMNS = ["run_id", "scope", "window_start_ms", "lefts", "matched", "unmatched",
                 "match_rate", "latency_p50_ms", "latency_p99_ms", "late_rights", "orphan_rights",
                 "duplicates_removed", "quarantined"]  # fmt: skip
_FIGURES = STATS_COLUMNS[STATS_COLUMNS.index("lefts"):]


def _unique_rows(joined: pa.Table) -> pa.Table:
    """One row per left id: the matched one if any, else the earliest batch's.

    In Arrow, so millions of ids never become Python strings (the sort is stable).
    """
    rank = pc.cast(pc.not_equal(joined["record"], "matched"), pa.int8())
    ranked = joined.append_column("_rank", rank)
    order = pc.sort_indices(ranked, sort_keys=[("id", "ascending"), ("_rank", "ascending"),
                                               ("batch_id", "ascending")])  # fmt: skip
    ordered = ranked.take(order).drop_columns(["_rank"])
    ids = ordered["id"]
    if len(ids) < 2:
        return ordered
    first = pa.concat_arrays([pa.array([True]),
                              pc.not_equal(ids.slice(1), ids.slice(0, len(ids) - 1)).combine_chunks()])  # fmt: skip
    return ordered.filter(first)


def _arrow(frame: pd.DataFrame | pa.Table) -> pa.Table:
    return frame if isinstance(frame, pa.Table) else pa.Table.from_pandas(frame, preserve_index=False)


def dedup_joined(joined: pd.DataFrame | pa.Table) -> pd.DataFrame:
    """One row per left id: the matched one if any, else the earliest."""
    return _unique_rows(_arrow(joined)).to_pandas()


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


def join_window_stats(joined: pd.DataFrame | pa.Table, rejects: pd.DataFrame, window_ms: int,
                      run_id: str) -> pd.DataFrame:  # fmt: skip
    """Per-window rows (windows of left creation time; rights by their own) and a cumulative row."""
    joined = _arrow(joined)
    # Ids are only needed to deduplicate: leaving them out keeps the frames small.
    unique = _unique_rows(joined).drop_columns(["id"]).to_pandas()
    raw_windows = pd.Series(window_start(joined["left_created_ms"].to_numpy(zero_copy_only=False),
                                         window_ms)).value_counts()  # fmt: skip
    by_window = dict(tuple(unique.groupby(window_start(unique["left_created_ms"], window_ms))))
    reject_window = window_start(rejects["right_created_ms"], window_ms)
    rejects_by_window = dict(tuple(rejects.groupby(reject_window)))
    rows = []
    for start in sorted(set(by_window) | set(rejects_by_window)):
        rows.append({"scope": "window", "window_start_ms": int(start),
                     **_summary(by_window.get(start, unique.iloc[:0]), int(raw_windows.get(start, 0)),
                                rejects_by_window.get(start, rejects.iloc[:0]))})  # fmt: skip
    rows.append({"scope": "cumulative", "window_start_ms": CUMULATIVE_WINDOW_START_MS,
                 **_summary(unique, joined.num_rows, rejects)})  # fmt: skip
    return pd.DataFrame(rows).assign(run_id=run_id)[STATS_COLUMNS]


# The columns gold reads of silver.joined and silver.join_rejects (both tables have them).
_STATS_INPUT = {"record": pa.string(), "id": pa.string(), "left_created_ms": pa.int64(),
                "right_created_ms": pa.int64(), "clock_ms": pa.int64(), "batch_id": pa.int64()}  # fmt: skip


def _read(backend: TableBackend, warehouse: Warehouse, table: TableName, run_id: str) -> pa.Table:
    path = warehouse.table_uri(*table)
    if backend.version(path) is None:
        return pa.schema(_STATS_INPUT).empty_table()
    data = backend.read(path)
    return data.filter(pc.equal(data["run_id"], run_id)).select(list(_STATS_INPUT))


def refresh_join_gold(backend: TableBackend, warehouse: Warehouse, run_id: str,
                      window_ms: int) -> dict[str, Any]:  # fmt: skip
    """Rebuild ``gold.join_stats`` for ``run_id`` from silver; returns the cumulative row."""
    joined = _read(backend, warehouse, JOINED, run_id)
    rejects = _read(backend, warehouse, JOIN_REJECTS, run_id).to_pandas()
    stats = join_window_stats(joined, rejects, window_ms, run_id)
    backend.merge(warehouse.table_uri(*JOIN_STATS), stats,
                  ["run_id", "scope", "window_start_ms"], query_id(run_id, "gold"),
                  time.time_ns() // 1_000)  # fmt: skip
    cumulative = stats[stats["scope"] == "cumulative"].iloc[0].to_dict()
    logger.info("%s for %s: %s", sql_name(JOIN_STATS), run_id,
                figures({column: cumulative[column] for column in _FIGURES}))
    return cumulative
