"""The crash harness's own logic: the job's layout and progress, the kill plan, where a kill
landed, and the table comparison."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pandas as pd
import pytest

from bench.crash_compare import TableCheck, compare_table
from bench.crash_harness import committed_batches
from bench.crash_kill import Landing, StepEvent, landed_step
from bench.crash_plan import (
    PAST,
    Layout,
    Point,
    Progress,
    UnitSeconds,
    plan_kills,
    points,
)
from core.tables import DeltaRsBackend
from core.warehouse import Warehouse


def _events(*lines: tuple[str, str, str]) -> list[StepEvent]:
    """Step events one second apart: ``(run, step, event)``, event ``batch N`` for a committed one."""
    events = []
    for i, (run, step, event) in enumerate(lines):
        kind, _, batch = event.partition(" ")
        events.append(StepEvent(run, step, kind, float(i), int(batch) if batch else None))
    return events


def _run(run: str, batches: int = 3) -> list[tuple[str, str, str]]:
    return [(run, "silver", "started"), *[(run, "silver", f"batch {n}") for n in range(batches)],
            (run, "silver", "done"), (run, "gold", "started"), (run, "gold", "done")]  # fmt: skip


REFERENCE = _events(*_run("a"), *_run("b", batches=2))
LAYOUT = Layout.of(REFERENCE, gates=True, labels={"a": "KEY", "b": "SHUFFLE"})


def test_the_layout_has_each_run_its_steps_gates_included_and_its_micro_batches():
    assert LAYOUT.runs == ("a", "b")
    assert LAYOUT.steps == ("silver", "bronze checks", "silver checks", "gold", "gold checks")
    assert LAYOUT.batches == {("a", 0): (0, 1, 2), ("b", 0): (0, 1)}
    assert [LAYOUT.describe(p) for p in LAYOUT.units(1)] == [
        "SHUFFLE silver", "SHUFFLE silver+1", "SHUFFLE bronze checks", "SHUFFLE silver checks",
        "SHUFFLE gold", "SHUFFLE gold checks"]  # fmt: skip
    assert LAYOUT.end == Point(1, 4, PAST)


def test_a_step_that_comes_twice_is_told_apart_by_how_often_it_started_in_the_life():
    lines = [("j", "join", "started"), ("j", "join", "batch 0"), ("j", "join", "done"),
             ("j", "join", "started"), ("j", "join", "batch 1"), ("j", "join", "done"),
             ("j", "gold", "started")]  # fmt: skip
    layout = Layout.of(_events(*lines, ("j", "gold", "done")))
    assert layout.steps == ("join", "join", "gold")
    assert layout.batches == {("j", 0): (0,), ("j", 1): (1,)}
    assert points(layout, _events(*lines)) == [
        Point(0, 0, 0), Point(0, 0, 1), Point(0, 0, PAST), Point(0, 1, 0), Point(0, 1, 1),
        Point(0, 1, PAST), Point(0, 2, 0)]  # fmt: skip
    # One run: no label; the step's second time is named so.
    assert [layout.describe(p) for p in layout.units(0)] == ["join #1", "join #2", "gold"]
    assert layout.describe(Point(0, 1, 1)) == "join #2+1"
    assert layout.describe(Point(0, 2, PAST)) == "after gold"


def test_a_resumed_life_goes_on_from_what_the_lives_before_committed():
    committed: dict = {}
    first = Progress(LAYOUT, committed)
    assert first.advance(_events(*_run("a"), ("b", "silver", "started"),
                                 ("b", "silver", "batch 0"))) == Point(1, 0, 1)  # fmt: skip
    # Killed in b's second micro-batch: the next life resumes b's silver from there.
    life = _events(("b", "silver", "started"), ("b", "silver", "batch 1"), ("b", "silver", "done"),
                   ("b", "bronze checks", "started"))  # fmt: skip
    second = Progress(LAYOUT, committed)
    second.advance(life)
    assert second.points == [Point(1, 0, 1), Point(1, 0, 2), Point(1, 0, PAST), Point(1, 1, 0)]
    assert [LAYOUT.describe(p) for p in second.points] == [
        "SHUFFLE silver+1", "SHUFFLE silver+2", "SHUFFLE after silver", "SHUFFLE bronze checks",
    ]  # fmt: skip
    with pytest.raises(ValueError, match="not in the job's layout"):
        points(LAYOUT, _events(("c", "silver", "started")))


def test_a_frozen_job_is_placed_by_its_checkpoints_as_they_are(tmp_path):
    # The line of a batch committed just before the freeze may not be written yet.
    progress = Progress(LAYOUT, committed_batches(Warehouse(tmp_path), LAYOUT))
    assert progress.advance(_events(("a", "silver", "started"))) == Point(0, 0, 0)
    commits = Path(Warehouse(tmp_path).checkpoint("a-silver")) / "commits"
    commits.mkdir(parents=True)
    for batch in (0, 1):
        (commits / str(batch)).write_text("v1")
    progress.committed.update(committed_batches(Warehouse(tmp_path), LAYOUT))
    assert progress.current() == Point(0, 0, 2)
    assert Progress(LAYOUT, committed_batches(Warehouse(tmp_path), LAYOUT)).advance(
        _events(("a", "silver", "started"))) == Point(0, 0, 2)  # fmt: skip


@pytest.mark.parametrize("kills", [1, 2, 3, 7, 12, 20])
def test_kills_spread_over_the_runs_then_their_units_in_order(kills):
    plan = plan_kills(LAYOUT, kills, seed=7)
    assert len(plan) == kills
    per_run = Counter(t.point.run for t in plan)
    assert max(per_run.values()) - min(per_run.values(), default=0) <= 1
    assert len(per_run) == min(kills, 2)
    for run in per_run:
        per_unit = Counter(t.point for t in plan if t.point.run == run)
        assert max(per_unit.values()) - min(per_unit.values()) <= 1
        assert len(per_unit) == min(per_run[run], len(LAYOUT.units(run)))
    assert [t.point for t in plan] == sorted(t.point for t in plan)
    assert all(0 <= t.fraction < 1 for t in plan)
    assert plan == plan_kills(LAYOUT, kills, seed=7)  # a seed gives the same plan
    assert plan != plan_kills(LAYOUT, kills, seed=8)


def test_a_unit_lasts_as_last_seen_else_as_its_like_in_other_runs_else_the_default():
    seconds = UnitSeconds(default_s=2.0)
    seconds.observe(LAYOUT, REFERENCE, points(LAYOUT, REFERENCE))  # events one second apart
    assert seconds.seconds(LAYOUT, Point(0, 0, 2)) == 1.0  # a's third micro-batch
    assert seconds.seconds(LAYOUT, Point(1, 0, 2)) == 1.0  # b has none: a's
    assert seconds.seconds(LAYOUT, Point(1, 2, 0)) == 2.0  # no gate seen yet
    gate = [StepEvent("a", "silver checks", "started", 10.0),
            StepEvent("a", "silver checks", "done", 14.0)]  # fmt: skip
    seconds.observe(LAYOUT, gate, points(LAYOUT, gate))
    assert seconds.seconds(LAYOUT, Point(1, 2, 0)) == 4.0


@pytest.mark.parametrize(("lines", "landed"), [
    ((), Landing(None, "start", None)),
    ((("r", "silver", "started"),), Landing("r", "silver", 0.0)),
    ((("r", "silver", "started"), ("r", "silver", "batch 0"), ("r", "silver", "batch 1")),
     Landing("r", "silver", 0.0, batches=2)),
    ((("r", "silver", "started"), ("r", "silver", "batch 0"), ("r", "silver", "done")),
     Landing("r", "after silver", 2.0)),
    ((("r", "silver", "started"), ("r", "silver", "done"), ("r", "bronze checks", "started")),
     Landing("r", "bronze checks", 2.0)),
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
