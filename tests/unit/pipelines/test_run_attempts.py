"""Recomputing a run: its next attempt clears its rows and checkpoints, and a cut-short clearing
is finished by whatever run of it comes next."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from core.run_plan import RunPlan, query_id
from core.tables import DeltaRsBackend
from core.warehouse import Warehouse
from pipelines.run_attempts import current_attempt, next_attempt

TABLES = [("bronze", "raw_events"), ("silver", "routed"), ("gold", "key_counts"), ("gold", "runs")]


@pytest.fixture
def warehouse(tmp_path: Path) -> Warehouse:
    warehouse, backend = Warehouse(tmp_path / "wh"), DeltaRsBackend()
    for layer, table in TABLES:
        rows = pa.table({"run_id": ["a", "b", "a"], "n": [1, 2, 3]})
        backend.append(warehouse.table_uri(layer, table), rows, "writer", 0)
    for query in ("a-bronze", "a-silver", "b-silver"):
        folder = Path(warehouse.checkpoint(query))
        folder.mkdir()
        (folder / "metadata").write_text("{}")
    return warehouse


def _runs_left(warehouse: Warehouse) -> dict[tuple[str, str], list[str]]:
    backend = DeltaRsBackend()
    return {(layer, table): sorted(backend.read(warehouse.table_uri(layer, table))["run_id"]
                                   .to_pylist()) for layer, table in TABLES}  # fmt: skip


def _checkpoints(warehouse: Warehouse) -> set[str]:
    return {path.name for path in Path(warehouse.checkpoint("x")).parent.iterdir()
            if path.is_dir()}  # fmt: skip


PLAN = RunPlan(run_id="a", source_type="ZIPF", grouping="KEY", splitters=1)
UNTOUCHED = {table: ["a", "a", "b"] for table in TABLES}
CLEARED = {**{table: ["b"] for table in TABLES}, ("gold", "runs"): ["a", "a", "b"]}


def test_a_run_never_recomputed_is_its_first_attempt_and_keeps_everything(warehouse):
    plan = current_attempt(PLAN, warehouse, DeltaRsBackend())
    assert plan.attempt == 0 and plan.query_id("silver") == "a-silver"
    assert _runs_left(warehouse) == UNTOUCHED
    assert _checkpoints(warehouse) == {"a-bronze", "a-silver", "b-silver"}


def test_the_next_attempt_clears_the_run_and_writes_under_new_ids(warehouse):
    backend = DeltaRsBackend()
    plan = next_attempt(PLAN, warehouse, backend)
    assert plan.attempt == 1
    assert {plan.query_id(q) for q in ("bronze", "silver", "gold")}.isdisjoint(
        {query_id("a", q) for q in ("bronze", "silver", "gold")})  # fmt: skip
    assert _runs_left(warehouse) == CLEARED  # gold.runs keeps the run's row, other runs stay
    assert _checkpoints(warehouse) == {"b-silver"}
    # The attempt is remembered: a plain run resumes it, a second recompute moves past it.
    assert current_attempt(PLAN, warehouse, backend).attempt == 1
    Path(warehouse.checkpoint(plan.query_id("silver"))).mkdir()
    assert next_attempt(PLAN, warehouse, backend).attempt == 2
    assert _checkpoints(warehouse) == {"b-silver"}


class _CrashingBackend(DeltaRsBackend):
    """Dies at its second delete, as a job killed in the middle of a clearing."""

    def __init__(self) -> None:
        super().__init__()
        self.deletes = 0

    def delete(self, path, where) -> None:
        self.deletes += 1
        if self.deletes == 2:
            raise KeyboardInterrupt("killed")
        super().delete(path, where)


def test_a_clearing_cut_short_is_finished_by_the_next_run_of_it(warehouse):
    with pytest.raises(KeyboardInterrupt):
        next_attempt(PLAN, warehouse, _CrashingBackend())
    assert _runs_left(warehouse) not in (UNTOUCHED, CLEARED)  # half cleared
    plan = current_attempt(PLAN, warehouse, DeltaRsBackend())
    assert plan.attempt == 1
    assert _runs_left(warehouse) == CLEARED
    assert _checkpoints(warehouse) == {"b-silver"}
