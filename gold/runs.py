"""``gold.runs``: one row per run (its source, grouping, settings and status), and reading them back.

A run's row is written when it starts and again when it ends; its metrics live
in ``gold.distribution_metrics``. The job reads both back to print a finished
run's results without running it again.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from core.run_plan import RunPlan
from core.tables.base import TableBackend
from core.warehouse import Warehouse
from gold.schemas import DISTRIBUTION_METRICS, RUNS

__all__ = ["RUNS_ARROW", "completed_results", "cumulative_metrics", "record_run", "run_row",
           "stored_run"]  # fmt: skip

RUNS_ARROW = pa.schema([
    ("run_id", pa.string()), ("source", pa.string()), ("topic", pa.string()),
    ("grouping", pa.string()), ("label", pa.string()), ("workers", pa.int64()),
    ("splitters", pa.int64()), ("messages", pa.int64()), ("parameters", pa.string()),
    ("load", pa.float64()), ("speed", pa.float64()), ("process_ms", pa.float64()),
    ("work", pa.string()), ("status", pa.string()),
    ("started_at", pa.timestamp("us", tz="UTC")), ("finished_at", pa.timestamp("us", tz="UTC")),
    ("seconds", pa.float64()),
])  # fmt: skip
"""The table's columns: ``parameters`` is the grouping's as JSON; ``load`` is null when the
stream's rate was unknown (a live topic); ``seconds`` is the run's wall-clock time."""


def run_row(plan: RunPlan, status: str = "running") -> dict[str, Any]:
    """The run's row as it starts (``RUNS_ARROW`` columns)."""
    return {"run_id": plan.run_id, "source": plan.source, "topic": plan.topic,
            "grouping": plan.grouping, "label": plan.label, "workers": plan.workers,
            "splitters": plan.splitters, "messages": plan.messages,
            "parameters": dict(plan.params), "load": plan.load, "speed": plan.speed,
            "process_ms": plan.run.process_ms, "work": plan.run.work, "status": status,
            "started_at": datetime.now(UTC), "finished_at": None, "seconds": 0.0}  # fmt: skip


def record_run(backend: TableBackend, warehouse: Warehouse, row: dict[str, Any]) -> None:
    """Insert or update the run's row (``RUNS_ARROW`` columns; ``parameters`` as a dict)."""
    values = {**row, "parameters": json.dumps(row["parameters"], sort_keys=True)}
    table = pa.Table.from_pylist([values], schema=RUNS_ARROW)
    backend.merge(warehouse.table_uri(*RUNS), table, ["run_id"], "runs",
                  time.time_ns() // 1_000)  # fmt: skip


def _row_of(backend: TableBackend, uri: str, predicate: Any) -> dict[str, Any] | None:
    if backend.version(uri) is None:
        return None
    table = backend.read(uri)
    rows = table.filter(predicate(table)).to_pylist()
    return rows[0] if rows else None


def cumulative_metrics(backend: TableBackend, warehouse: Warehouse, run_id: str) -> dict[str, Any]:
    """The run's cumulative ``gold.distribution_metrics`` row ({} before gold has one)."""
    row = _row_of(backend, warehouse.table_uri(*DISTRIBUTION_METRICS),
                  lambda t: pc.and_(pc.equal(t["run_id"], run_id),
                                    pc.equal(t["scope"], "cumulative")))  # fmt: skip
    return row or {}


def stored_run(backend: TableBackend, warehouse: Warehouse, run_id: str) -> dict[str, Any] | None:
    """The run's ``gold.runs`` row, None if it never started."""
    return _row_of(backend, warehouse.table_uri(*RUNS),
                   lambda t: pc.equal(t["run_id"], run_id))  # fmt: skip


def completed_results(backend: TableBackend, warehouse: Warehouse,
                      plans: Sequence[RunPlan]) -> list[dict[str, Any]] | None:  # fmt: skip
    """Each plan's stored cumulative metrics if every one of them already ran to the end of
    the same messages (a finished run is complete); None if any did not."""
    results = []
    for plan in plans:
        stored = stored_run(backend, warehouse, plan.run_id)
        if stored is None or stored["status"] != "succeeded" or stored["messages"] != plan.messages:
            return None
        metrics = cumulative_metrics(backend, warehouse, plan.run_id)
        if not metrics:
            return None
        results.append({"grouping": plan.label, **metrics})
    return results
