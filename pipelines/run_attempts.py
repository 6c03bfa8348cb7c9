"""Recomputing a finished run: the run's next attempt, under the same run id.

Every writer of a run records its micro-batches in each Delta table under its
query id (:func:`core.run_plan.query_id`), so a finished run started again
writes nothing. ``dkg run --recompute`` starts the run's next attempt instead:
the run's rows leave every table but ``gold.runs`` (whose row the caller has
already marked ``running``, so a half-cleared run never passes for a finished
one), the earlier attempts' checkpoints go, and the writers take ids that carry
the attempt's number.

The attempt, and whether its clearing is done, live in one small JSON file
beside the checkpoints, replaced atomically: a run started again after a crash
reads it, finishes a clearing the crash cut short, and resumes that attempt.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import shutil
from pathlib import Path

from core.run_plan import RunPlan, query_id
from core.tables.base import TableBackend
from core.warehouse import Warehouse
from gold.schemas import RUNS

__all__ = ["current_attempt", "next_attempt"]

logger = logging.getLogger(__name__)

_QUERIES = ("bronze", "silver", "gold")
"""The writers a run may have checkpoints for."""


def _attempt_file(warehouse: Warehouse, run_id: str) -> Path:
    return Path(warehouse.checkpoint(f"{run_id}.attempt.json"))


def _read(path: Path) -> tuple[int, bool]:
    """The attempt's number and whether its clearing is done; a run never recomputed: (0, True)."""
    if not path.exists():
        return 0, True
    recorded = json.loads(path.read_text())
    return int(recorded["attempt"]), bool(recorded["cleared"])


def _write(path: Path, attempt: int, cleared: bool) -> None:
    scratch = path.with_name(path.name + ".tmp")
    scratch.write_text(json.dumps({"attempt": attempt, "cleared": cleared}))
    os.replace(scratch, path)


def current_attempt(plan: RunPlan, warehouse: Warehouse, backend: TableBackend) -> RunPlan:
    """The plan of the run's current attempt, its clearing finished first if it was cut short."""
    path = _attempt_file(warehouse, plan.run_id)
    attempt, cleared = _read(path)
    if not cleared:
        _clear(plan.run_id, attempt, warehouse, backend)
        _write(path, attempt, cleared=True)
    return dataclasses.replace(plan, attempt=attempt)


def next_attempt(plan: RunPlan, warehouse: Warehouse, backend: TableBackend) -> RunPlan:
    """Start the run afresh: the plan of its next attempt, the run's earlier rows deleted.

    The caller marks the run's ``gold.runs`` row ``running`` before (see the module).
    """
    path = _attempt_file(warehouse, plan.run_id)
    attempt, _ = _read(path)
    _write(path, attempt + 1, cleared=False)
    return current_attempt(plan, warehouse, backend)


def _clear(run_id: str, attempt: int, warehouse: Warehouse, backend: TableBackend) -> None:
    """Delete the run's rows from every table but ``gold.runs``, and its earlier checkpoints."""
    logger.info("recomputing %s: deleting its earlier rows and checkpoints", run_id)
    runs = warehouse.table_uri(*RUNS)
    for _, _, uri in warehouse.tables():
        if uri != runs:
            backend.delete(uri, {"run_id": [run_id]})
    for earlier in range(attempt):
        for query in _QUERIES:
            shutil.rmtree(warehouse.checkpoint(query_id(run_id, query, earlier)), ignore_errors=True)
