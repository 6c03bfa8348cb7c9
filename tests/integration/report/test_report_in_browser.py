"""`dkg report` opened in a real headless Chromium: it draws offline, fits the screen, shows gold.

The numbers are checked against the gold Delta tables read here with delta-rs,
not against the report's own data functions, and the charts' numbers are read
from what Vega drew (its scenegraph), not from the spec.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from deltalake import DeltaTable

from gold.report.data import SUMMARY_COLUMNS
from pipelines.cli import main
from tests.unit.gold.report.gold_tables import gold_frames, write_gold

WIDTH = 1366
"""A common laptop screen: the report must fit it without scrolling sideways."""

_CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--no-first-run", "--disable-sync"]  # fmt: skip

_NO_CHROMIUM = ("no Chromium on this machine: scripts/test.sh installs Debian's chromium "
                "when run as root with apt")  # fmt: skip
pytestmark = [pytest.mark.skipif(_CHROMIUM is None, reason=_NO_CHROMIUM), pytest.mark.timeout(60)]

# Vega's scenegraph, flattened: every drawn item of the data marks (not axes or
# legends), with its datum.
_DRAWN = """(key) => {
  const out = [];
  const walk = (mark) => {
    for (const item of mark.items || []) {
      if (mark.role === "mark" && mark.marktype !== "group") out.push({type: mark.marktype, ...item.datum});
      for (const child of item.items || []) walk(child);
    }
  };
  walk(window.dkgReport.views[key].scenegraph().root);
  return JSON.parse(JSON.stringify(out));
}"""


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=_CHROMIUM, args=_ARGS)
        yield browser
        browser.close()


class _Opened:
    """A report open in a page, with what the page logged and asked the network for."""

    def __init__(self, browser, path: Path):
        self.page = browser.new_page(viewport={"width": WIDTH, "height": 900})
        self.errors, self.requests = [], []
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.route(lambda url: not url.startswith("file:"), lambda route: route.abort())
        self.url = path.as_uri()
        self.page.goto(self.url)
        assert self.page.evaluate("window.dkgReport.ready")

    def drawn(self, key: str) -> list[dict]:
        return self.page.evaluate(_DRAWN, key)

    def wait_runs(self, key: str, runs: set[str]) -> None:
        """Until the chart ``key`` draws exactly the ``runs`` (the picker redraws asynchronously)."""
        self.page.wait_for_function(f"new Set(({_DRAWN})('{key}').map((d) => d.run_id)).size"
                                    f" === {len(runs)} && ({_DRAWN})('{key}')"
                                    f".every((d) => {sorted(runs)}.includes(d.run_id))",
                                    timeout=10_000)  # fmt: skip


def _write_report(root: Path, frames) -> Path:
    warehouse = write_gold(root / "lakehouse", frames)
    output = root / "report.html"
    assert main(["report", "--warehouse", str(warehouse), "--output", str(output)]) == 0
    return output


@pytest.fixture(scope="module")
def opened(browser, tmp_path_factory):
    root = tmp_path_factory.mktemp("report")
    report = _Opened(browser, _write_report(root, gold_frames()))
    report.gold = {name: DeltaTable(str(root / "lakehouse" / "gold" / name)).to_pandas()
                   for name in ("distribution_metrics", "worker_load", "runs",
                                "worker_busy")}  # fmt: skip
    yield report
    report.page.close()


def test_renders_offline_without_errors(opened):
    assert opened.errors == []
    assert opened.requests == [opened.url]  # the page itself, nothing else
    # Every chart drew marks: one view per chart plus one per run with hot keys.
    views = ["busy_batches", "busy_workers", "capacity", "dist_cost", "hot_keys:run-dkg",
             "latency", "utilisation", "windows", "worker_load"]  # fmt: skip
    assert sorted(opened.page.evaluate("Object.keys(window.dkgReport.views)")) == views
    assert opened.page.locator(".chart svg.marks").count() == len(views)


def test_fits_a_1366_pixel_screen(opened):
    page = opened.page
    assert page.evaluate("document.documentElement.scrollWidth") <= WIDTH
    table = page.locator("#summary-table")
    assert table.bounding_box()["x"] + table.bounding_box()["width"] <= WIDTH
    assert page.evaluate("(t) => t.parentElement.scrollWidth <= t.parentElement.clientWidth",
                         table.element_handle())  # fmt: skip
    for chart in page.locator(".chart").all():
        box = chart.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= WIDTH


def test_summary_table_shows_golds_cumulative_metrics(opened):
    cumulative = opened.gold["distribution_metrics"].query("scope == 'cumulative'")
    cells = opened.page.evaluate("""() => Array.from(
        document.querySelectorAll('tr.run-row td[data-column]'),
        (td) => [td.closest('tr').dataset.runId, td.dataset.column, td.dataset.value, td.innerText])""")
    assert len(cells) == 2 * (1 + len(SUMMARY_COLUMNS))  # workers, then the metrics
    assert {"p50_ms", "p99_ms", "capacity", "capacity_vs_key"} <= {c[1] for c in cells}
    for run_id, column, exact, text in cells:
        expected = cumulative.set_index("run_id").loc[run_id, column]
        assert float(exact) == expected, (run_id, column)
        assert float(text.replace(",", "")) == pytest.approx(expected, rel=1e-3, abs=5e-5)


def test_charts_draw_golds_numbers(opened):
    metrics = opened.gold["distribution_metrics"]
    windows = metrics.query("scope == 'window'").sort_values("window_start_ms")
    points = [p for p in opened.drawn("windows") if p["type"] == "symbol"]
    lines = [p for p in opened.drawn("windows") if p["type"] == "line"]
    for run_id, rows in windows.groupby("run_id"):
        drawn = sorted((p["time"], p["value"]) for p in points if p["run_id"] == run_id)
        assert drawn == list(zip(rows["window_start_ms"], rows["imbalance"], strict=True))
        # A line through every window, not lone points.
        assert len([p for p in lines if p["run_id"] == run_id]) == len(rows) >= 2
    loads = opened.gold["worker_load"].groupby(["run_id", "worker"])["tuples"].sum()
    bars = [b for b in opened.drawn("worker_load") if b["type"] == "rect"]
    assert {(b["run_id"], b["worker"]): b["tuples"] for b in bars} == loads.to_dict()


def test_queue_charts_draw_golds_numbers(opened):
    metrics = opened.gold["distribution_metrics"]
    windows = metrics.query("scope == 'window'")
    latency = {(p["run_id"], p["time"], p["percentile"]): p["latency_ms"]
               for p in opened.drawn("latency") if p["type"] == "symbol"}  # fmt: skip
    expected = {(r.run_id, r.window_start_ms, name): getattr(r, f"{name}_ms")
                for r in windows.itertuples() for name in ("p50", "p99")}  # fmt: skip
    assert latency == expected
    cumulative = metrics.query("scope == 'cumulative'").set_index("run_id")
    drawn = opened.drawn("capacity")
    bars = {b["run_id"]: b["capacity"] for b in drawn if b["type"] == "rect" and "vs_key" in b}
    assert bars == cumulative["capacity"].to_dict()
    runs = opened.gold["runs"].set_index("run_id")
    offered = (runs["load"] * runs["workers"] * 1000 / runs["process_ms"]).to_dict()
    ticks = {t["run_id"]: t["offered_per_s"] for t in drawn if t["type"] == "rect"
             and t["offered_per_s"] is not None}  # fmt: skip
    assert ticks == pytest.approx(offered)
    busy = opened.gold["worker_busy"].groupby(["run_id", "worker"])["busy_s"].sum()
    bars = {(b["run_id"], b["worker"]): b["busy_s"] for b in opened.drawn("busy_workers")}
    assert bars == pytest.approx(busy.to_dict())


def test_the_story_is_on_top(opened):
    story = opened.page.locator("#story")
    assert story.is_visible()
    assert story.bounding_box()["y"] < opened.page.locator("#summary-table").bounding_box()["y"]
    # gold_tables: KEY's worker 0 serves 70 tuples of 1 s each in the first 60 s window.
    assert story.inner_text().startswith(
        "KEY's worker 0 saturates at 1970-01-01 00:00 UTC (minute 0)")


def test_run_picker_hides_a_run_everywhere(opened):
    page = opened.page
    page.locator("input.pick[value='run-key']").uncheck()
    opened.wait_runs("windows", {"run-dkg"})
    try:
        for key in ("windows", "worker_load", "dist_cost", "latency", "capacity"):
            assert {p["run_id"] for p in opened.drawn(key)} == {"run-dkg"}, key
        row = page.locator("tr.run-row[data-run-id='run-key']")
        assert row.get_attribute("class") == "run-row off"
        rows = page.locator("#worker-load-table tr[data-run-id='run-key']")
        assert all(row.get_attribute("hidden") is not None for row in rows.all())
    finally:
        page.get_by_role("button", name="all runs").click()
        opened.wait_runs("windows", {"run-key", "run-dkg"})
    page.get_by_role("button", name="DYNAMIC_KEY").click()  # all shown: hides the grouping
    opened.wait_runs("windows", {"run-key"})
    assert page.locator("figure[data-run-id='run-dkg']").get_attribute("hidden") is not None
    page.get_by_role("button", name="DYNAMIC_KEY").click()
    opened.wait_runs("windows", {"run-key", "run-dkg"})
    assert page.locator("figure[data-run-id='run-dkg']").get_attribute("hidden") is None


def test_hover_shows_the_value_and_the_wheel_zooms(opened):
    page = opened.page
    cumulative = opened.gold["distribution_metrics"].query("scope == 'cumulative'")
    point = page.locator("[data-chart='dist_cost'] path[role='graphics-symbol']").first
    point.scroll_into_view_if_needed()
    point.hover()
    tooltip = page.locator("#vg-tooltip-element")
    tooltip.wait_for(state="visible", timeout=5_000)
    shown = tooltip.inner_text()
    assert any(f"{v:.6g}" in shown for v in cumulative["imbalance"]), shown
    chart = page.locator("[data-chart='windows'] svg").first
    chart.scroll_into_view_if_needed()
    domain = "window.dkgReport.views.windows.scale('x').domain().map(Number)"  # times: ms
    before = page.evaluate(domain)
    box = chart.bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.wheel(0, -300)
    page.wait_for_function(f"{domain}[1] < {before[1]}")


def test_one_window_still_draws_its_points(browser, tmp_path):
    # A run shorter than one window: one point per run, drawn inside the plot.
    frames = gold_frames()
    metrics = frames["distribution_metrics"]
    frames["distribution_metrics"] = metrics[metrics["window_start_ms"] <= 0]
    frames["worker_load"] = frames["worker_load"].query("window_start_ms == 0")
    report = _Opened(browser, _write_report(tmp_path, frames))
    try:
        assert report.errors == [] and report.requests == [report.url]
        points = [p for p in report.drawn("windows") if p["type"] == "symbol"]
        drawn = sorted((p["run_id"], p["time"]) for p in points)
        assert drawn == [("run-dkg", 0), ("run-key", 0)]
        width = report.page.evaluate("window.dkgReport.views.windows.width()")
        x = report.page.evaluate("window.dkgReport.views.windows.scale('x')(0)")
        assert 0 <= x <= width
    finally:
        report.page.close()
