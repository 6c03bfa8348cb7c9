"""The charts' specs draw gold's numbers: latency, capacity, utilisation, busy time, dist_cost.

Each chart's rows are checked against the hand-built gold frames, and the
scatter is rendered (vl-convert, the same Vega) to check what a reader sees.
"""

from __future__ import annotations

import json
import re
from itertools import combinations

import pytest
import vl_convert

from gold.report import build_report_data
from gold.report.charts import render_charts
from gold.report.vega import VEGA_LITE_VERSION
from tests.unit.gold.report.gold_tables import gold_frames
from tests.unit.gold.report.skewed_runs import LOADS, P99_MS, START_MS, WINDOW_MS, skewed_frames


def _specs(frames, **extra):
    data = build_report_data(frames["distribution_metrics"], frames["worker_load"],
                             frames.get("runs"), frames.get("hot_keys"), **extra)  # fmt: skip
    return render_charts(data)


def _rows(spec):
    return spec["data"]["values"]


def test_latency_is_p99_and_p50_per_window_on_a_log_axis_of_utc_times():
    frames = skewed_frames()
    metrics = frames["distribution_metrics"]
    first_key_window = (metrics["run_id"] == "run-key") & (metrics["window_start_ms"] == START_MS)
    metrics.loc[first_key_window, "p50_ms"] = 0.0  # a log axis cannot draw it: left out
    spec = _specs(frames)["latency"]
    drawn = {(r["run_id"], r["time"], r["percentile"]): r["latency_ms"] for r in _rows(spec)}
    expected = {(run, START_MS + i * WINDOW_MS, "p99"): p99
                for run, p99s in P99_MS.items() for i, p99 in enumerate(p99s)}  # fmt: skip
    expected |= {(run, START_MS + i * WINDOW_MS, "p50"): 1.0 for run in P99_MS for i in range(4)}
    del expected[("run-key", START_MS, "p50")]
    assert drawn == expected
    assert {r["window"] for r in _rows(spec) if r["time"] == START_MS} == {"2026-01-01 00:00:00 UTC"}
    lines = spec["layer"][0]["encoding"]
    assert lines["y"]["scale"] == {"type": "log"}
    assert (lines["x"]["type"], lines["x"]["scale"]["type"]) == ("temporal", "utc")
    assert lines["strokeDash"]["scale"] == {"domain": ["p99", "p50"], "range": [[1, 0], [6, 4]]}


def test_capacity_bars_carry_their_ratio_to_key_and_the_offered_rate():
    frames = skewed_frames()
    cumulative = frames["distribution_metrics"].query("scope == 'cumulative'").set_index("run_id")
    spec = _specs(frames)["capacity"]
    rows = {r["run_id"]: r for r in _rows(spec)}
    offered = 0.8 * 2 * 1000 / 0.5  # load x W x 1000 / process_ms from gold.runs
    for run_id, row in rows.items():
        assert row["capacity"] == cumulative.loc[run_id, "capacity"]
        assert row["offered_per_s"] == pytest.approx(offered)
    # 121000/97200 and 121000/96000: KEY's busiest worker over theirs on the same tuples.
    assert {r: row["vs_key"] for r, row in rows.items()} == {
        "run-key": "1.00x KEY", "run-pkg": "1.26x KEY", "run-dkg": "1.24x KEY"}
    # 192000 * 1000 / (0.5 * 121000) = 3173.6 tuples/s: KEY cannot keep up with 3200.
    assert {r: row["keeps_up"] for r, row in rows.items()} == {
        "run-key": "no", "run-pkg": "yes", "run-dkg": "yes"}
    bars, ratios, rate = spec["layer"]
    assert (bars["mark"]["type"], ratios["encoding"]["text"], rate["mark"]["type"]) == (
        "bar", {"field": "vs_key"}, "tick")
    assert rate["encoding"]["y"]["field"] == "offered_per_s"


def test_utilisation_is_drawn_per_window_with_a_rule_at_saturation():
    spec = _specs(skewed_frames())["utilisation"]
    drawn = {(r["run_id"], r["time"]): (r["worker"], r["utilisation"]) for r in _rows(spec)}
    # tuples x 0.5 ms / (60000 ms / speed 4): the busiest worker's share of the window.
    expected = {(run, START_MS + i * WINDOW_MS): (w.index(max(w)), max(w) / 30_000)
                for run, windows in LOADS.items() for i, w in enumerate(windows)}  # fmt: skip
    assert drawn.keys() == expected.keys()
    for key, (worker, value) in expected.items():
        assert drawn[key][0] == worker and drawn[key][1] == pytest.approx(value)
    rule = spec["layer"][1]
    assert (rule["mark"]["type"], rule["encoding"]["y"]) == ("rule", {"datum": 1})


def test_busy_time_charts_show_only_the_runs_that_measured_it():
    gold = gold_frames()
    specs = _specs(gold, worker_busy=gold["worker_busy"])
    workers = {(r["run_id"], r["worker"]): r["busy_s"] for r in _rows(specs["busy_workers"])}
    assert workers == pytest.approx({("run-dkg", 0): 0.7, ("run-dkg", 1): 0.4,
                                     ("run-dkg", 2): 0.55})  # fmt: skip
    batches = {(r["batch_id"], r["series"]): r["seconds"] for r in _rows(specs["busy_batches"])}
    assert batches == pytest.approx({(0, "critical path"): 0.5, (0, "mean"): 1.2 / 3,
                                     (1, "critical path"): 0.25, (1, "mean"): 0.45 / 3})  # fmt: skip
    legend = specs["busy_workers"]["encoding"]["color"]["scale"]
    assert legend["domain"] == ["DYNAMIC_KEY"]
    assert "busy_workers" not in _specs(gold)  # no gold.worker_busy table


def test_event_times_are_utc_dates_not_minutes():
    specs = _specs(gold_frames())
    text = json.dumps(specs)
    assert "minute" not in text
    for spec in (specs["windows"], specs["latency"], specs["utilisation"],
                 specs["hot_keys"]["run-dkg"]):  # fmt: skip
        x = (spec.get("encoding") or spec["layer"][0]["encoding"])["x"]
        assert (x["field"], x["type"], x["scale"]["type"]) == ("time", "temporal", "utc")
    pools = {(r["key"], r["time"]) for r in _rows(specs["hot_keys"]["run-dkg"])}
    assert pools == {("Turkey", 15_000), ("Turkey", 30_000), ("Turkey", 75_000), ("Spain", 30_000)}


def _scatter_svg(frames, width=600):
    spec = {**_specs(frames)["dist_cost"], "width": width}
    return vl_convert.vegalite_to_svg(spec, vl_version=VEGA_LITE_VERSION)


def _with_scatter(imbalance, dist_cost):
    frames = skewed_frames()
    metrics = frames["distribution_metrics"]
    metrics.loc[metrics["scope"] == "cumulative", ["imbalance", "dist_cost"]] = list(
        zip(imbalance, dist_cost, strict=True))
    return frames


@pytest.mark.parametrize(("imbalance", "dist_cost"), [
    ([0.0, 0.001, 0.3], [1.0, 1.0, 1.001]),  # a perfectly balanced run at the origin
    ([0.45, 0.002, 0.0], [1.0, 3.0, 1.04]),
])  # fmt: skip
def test_the_scatters_axes_have_no_negative_ticks(imbalance, dist_cost):
    svg = _scatter_svg(_with_scatter(imbalance, dist_cost))
    ticks = re.findall(r'<text[^>]*>([\d.,\u2212-]+)</text>', svg)
    assert len(ticks) > 6
    assert not [t for t in ticks if t.startswith(("-", "\u2212"))], ticks


def _name_boxes(svg):
    """The run names the scatter drew: (left, right, baseline y), about 6.5 px a letter."""
    boxes = []
    pattern = r'<text[^>]*text mark[^>]*text-anchor="(\w+)" transform="translate\(([\d.]+),([\d.]+)\)"[^>]*>([^<]+)</text>'
    for anchor, x, y, name in re.findall(pattern, svg):
        width = 6.5 * len(name)
        left = float(x) - (width if anchor == "end" else 0)
        boxes.append((name, left, left + width, float(y)))
    return boxes


@pytest.mark.parametrize(("imbalance", "dist_cost"), [
    ([0.3, 0.0100, 0.0100], [1.0, 1.0, 1.0]),  # two runs on one point
    ([0.0101, 0.0100, 0.0100], [1.0, 1.0, 1.0005]),  # all three nearly on one point
    ([0.2, 0.2, 0.201], [1.5, 1.5, 1.5]),  # near the right edge: names to the left
])  # fmt: skip
def test_names_of_near_points_do_not_overlap(imbalance, dist_cost):
    boxes = _name_boxes(_scatter_svg(_with_scatter(imbalance, dist_cost)))
    assert sorted(b[0] for b in boxes) == ["DYNAMIC_KEY", "KEY", "PARTIAL_KEY"]
    for a, b in combinations(boxes, 2):
        apart = a[2] <= b[1] or b[2] <= a[1] or abs(a[3] - b[3]) >= 11
        assert apart, (a, b)
