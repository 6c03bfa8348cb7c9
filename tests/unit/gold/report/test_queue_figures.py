"""The queue model's figure data against hand-built gold: capacity, utilisation, busy time."""

from __future__ import annotations

import pytest

from core.config import RunConfig
from gold.report import build_report_data
from gold.report.html import render_html
from tests.unit.gold.report.gold_tables import gold_frames
from tests.unit.gold.report.skewed_runs import (
    LOAD,
    LOADS,
    PROCESS_MS,
    SPEED,
    START_MS,
    WINDOW_MS,
    WORKERS,
    skewed_frames,
)


def _data(frames, **extra):
    return build_report_data(frames["distribution_metrics"], frames["worker_load"],
                             frames.get("runs"), **extra)  # fmt: skip


def test_capacity_and_the_rate_each_run_was_offered():
    frames = skewed_frames()
    frames["runs"].loc[frames["runs"]["run_id"] == "run-pkg", "load"] = None  # a live topic
    cumulative = frames["distribution_metrics"].query("scope == 'cumulative'").set_index("run_id")
    shown = {r["run_id"]: r for r in _data(frames).capacity}
    assert list(shown) == ["run-key", "run-pkg", "run-dkg"]
    for run_id, row in shown.items():
        assert row["capacity"] == cumulative.loc[run_id, "capacity"]
        assert row["capacity_vs_key"] == cumulative.loc[run_id, "capacity_vs_key"]
    offered = LOAD * WORKERS * 1000 / PROCESS_MS
    assert offered == pytest.approx(3200.0)
    assert {r: row["offered_per_s"] for r, row in shown.items()} == {
        "run-key": offered, "run-pkg": None, "run-dkg": offered}


def test_utilisation_is_the_busiest_workers_share_of_the_windows_wall_time():
    util = {r["run_id"]: r for r in _data(skewed_frames()).utilisation}
    for run_id, loads in LOADS.items():
        run = util[run_id]
        assert run["window_ms"] == WINDOW_MS
        assert run["window_start_ms"] == [START_MS + i * WINDOW_MS for i in range(4)]
        peaks = [max(window) for window in loads]
        assert run["tuples"] == peaks
        assert run["worker"] == [window.index(max(window)) for window in loads]
        # busy ms (tuples x 0.5 ms) over the window's wall-clock ms (60000 / speed 4).
        assert run["utilisation"] == pytest.approx([p * PROCESS_MS / (WINDOW_MS / SPEED)
                                                    for p in peaks])  # fmt: skip
    assert util["run-key"]["utilisation"] == pytest.approx([28 / 30, 28.5 / 30, 1.05, 1.1])


def _drop_windows(frames, run_id, keep):
    """The run's windows whose start fails ``keep`` left out of both window tables."""
    for name in ("distribution_metrics", "worker_load"):
        frame = frames[name]
        gone = (frame["run_id"] == run_id) & (frame["window_start_ms"] >= 0) \
            & ~frame["window_start_ms"].map(keep)
        frames[name] = frame[~gone]


def test_a_missing_window_does_not_stretch_the_window():
    frames = skewed_frames()
    # No tuples in KEY's second window: its starts are 0, 2 and 3 minutes in.
    _drop_windows(frames, "run-key", lambda start: start != START_MS + WINDOW_MS)
    util = {r["run_id"]: r for r in _data(frames).utilisation}["run-key"]
    assert util["window_start_ms"] == [START_MS, START_MS + 120_000, START_MS + 180_000]
    assert util["window_ms"] == WINDOW_MS
    assert util["utilisation"] == pytest.approx([28 / 30, 1.05, 1.1])  # tuples / 30000


def test_a_lone_window_borrows_the_shown_runs_window():
    frames = skewed_frames()
    _drop_windows(frames, "run-pkg", lambda start: start in (START_MS, START_MS + 120_000))
    _drop_windows(frames, "run-dkg", lambda start: start == START_MS)  # its first window only
    util = {r["run_id"]: r for r in _data(frames, run_ids=["run-pkg", "run-dkg"]).utilisation}
    assert util["run-pkg"]["window_ms"] == 120_000  # all PARTIAL_KEY's windows tell
    assert util["run-dkg"]["window_start_ms"] == [START_MS]
    assert util["run-dkg"]["window_ms"] == 120_000  # borrowed from PARTIAL_KEY
    assert util["run-dkg"]["utilisation"] == pytest.approx([24_300 * PROCESS_MS * SPEED / 120_000])
    alone = _data(frames, run_ids=["run-dkg"]).utilisation[0]
    assert alone["window_ms"] == RunConfig().aggregation_window_ms  # nothing to measure by


def test_without_speed_utilisation_is_unknown_and_not_drawn():
    frames = skewed_frames()
    frames["runs"] = frames["runs"].drop(columns=["speed"])
    data = _data(frames)
    assert all(v is None for run in data.utilisation for v in run["utilisation"])
    html = render_html(data, "warehouse")
    assert 'data-chart="utilisation"' not in html
    assert "utilisation is unknown" in html


def test_busy_time_per_worker_and_per_micro_batch():
    gold = gold_frames()
    data = build_report_data(gold["distribution_metrics"], gold["worker_load"], gold["runs"],
                             worker_busy=gold["worker_busy"])  # fmt: skip
    assert [r["run_id"] for r in data.busy] == ["run-dkg"]  # the only run with work=cpu
    busy = data.busy[0]
    # gold_tables: batch 0 workers 0-2 busy 0.50, 0.40, 0.30 s; batch 1 workers 0 and 2
    # busy 0.20 and 0.25 s (worker 1 idle); tasks' wall 0.61/0.52/0.45 and 0.30/0.33 s.
    assert busy["busy_s"] == pytest.approx([0.70, 0.40, 0.55])
    assert busy["tuples"] == [35 + 17, 33, 32 + 17]
    assert busy["batch_id"] == [0, 1]
    assert busy["critical_s"] == pytest.approx([0.50, 0.25])
    assert busy["mean_s"] == pytest.approx([1.20 / 3, 0.45 / 3])
    assert busy["wall_s"] == pytest.approx([0.61, 0.33])


@pytest.mark.parametrize("table", ["missing", "empty", "other runs only"])
def test_no_busy_rows_leave_the_section_out(table):
    gold = gold_frames()
    busy = {"missing": None, "empty": gold["worker_busy"].iloc[:0],
            "other runs only": gold["worker_busy"].assign(run_id="run-elsewhere")}[table]
    data = build_report_data(gold["distribution_metrics"], gold["worker_load"], gold["runs"],
                             worker_busy=busy)  # fmt: skip
    assert data.busy == []
    html = render_html(data, "warehouse")
    assert 'id="busy"' not in html and 'data-chart="busy_workers"' not in html
