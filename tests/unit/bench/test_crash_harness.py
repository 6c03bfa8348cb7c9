"""The crash harness's own logic: its kill plan, where a kill landed, and the table comparison."""

from __future__ import annotations

import pandas as pd
import pytest

from bench.crash_compare import TableCheck, compare_table
from bench.crash_harness import plan_kills
from bench.crash_kill import StepEvent, landed_step
from core.tables import DeltaRsBackend
from core.warehouse import Warehouse

STEPS = [("bronze", 0), ("silver", 0), ("workers", 0), ("gold", 0)]


@pytest.mark.parametrize("kills", [1, 3, 4, 10, 20])
def test_kills_spread_over_the_steps_in_order(kills):
    plan = plan_kills(STEPS, kills, seed=7)
    assert len(plan) == kills
    per_step = pd.Series([t.step for t in plan]).value_counts()
    assert per_step.max() - per_step.min() <= 1
    assert len(per_step) == min(kills, len(STEPS))
    order = [s for s, _ in STEPS]
    assert [order.index(t.step) for t in plan] == sorted(order.index(t.step) for t in plan)
    assert all(0 <= t.fraction < 1 for t in plan)
    assert plan == plan_kills(STEPS, kills, seed=7)  # a seed gives the same plan
    assert plan != plan_kills(STEPS, kills, seed=8)


def _events(*lines: tuple[str, str]) -> list[StepEvent]:
    return [StepEvent(step, event, float(i)) for i, (step, event) in enumerate(lines)]


@pytest.mark.parametrize(("lines", "landed"), [
    ((), ("start", None)),
    ((("bronze", "started"),), ("bronze", 0.0)),
    ((("bronze", "started"), ("bronze", "done")), ("after bronze", 1.0)),
    ((("bronze", "started"), ("bronze", "done"), ("bronze checks", "started")), ("bronze checks", 2.0)),
])  # fmt: skip
def test_a_kill_lands_in_the_step_open_at_the_freeze(lines, landed):
    assert landed_step(_events(*lines)) == landed


CHECK = TableCheck(("gold", "stats"), ("run_id", "window"), {"seconds": "wall clock"})


def _table(root, rows: list[dict]) -> Warehouse:
    warehouse = Warehouse(root)
    DeltaRsBackend().append(warehouse.table_uri("gold", "stats"), pd.DataFrame(rows), "t", 0)
    return warehouse


ROWS = [{"run_id": "r", "window": w, "count": 10 * w, "share": w / 3, "seconds": 1.0}
        for w in range(3)]  # fmt: skip


@pytest.mark.parametrize(("crashed", "wrong"), [
    ([{**r, "seconds": 9.0} for r in ROWS], None),                        # left-out column only
    ([{**r, "share": r["share"] * (1 + 1e-12)} for r in ROWS], None),     # last-bit rounding
    (ROWS[:2], "missing"),
    ([*ROWS, {**ROWS[0], "window": 7}], "extra"),
    ([*ROWS, ROWS[1]], "duplicated"),
    ([{**r, "count": r["count"] + (r["window"] == 2)} for r in ROWS], "differing"),
    ([{**r, "share": r["share"] * (1 + 1e-6)} for r in ROWS], "differing"),
])  # fmt: skip
def test_the_comparison_names_every_kind_of_difference(tmp_path, crashed, wrong):
    row = compare_table(_table(tmp_path / "a", ROWS), _table(tmp_path / "b", crashed), CHECK)
    kinds = {kind for kind in ("missing", "extra", "duplicated", "differing") if row[kind]}
    assert kinds == ({wrong} if wrong else set()), row
    assert row["ok"] is (wrong is None)
