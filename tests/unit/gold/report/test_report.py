"""`dkg report` on small hand-built gold tables: renders offline, and shows gold's numbers."""

from __future__ import annotations

import json
from html.parser import HTMLParser

import pandas as pd
import pytest
import vl_convert

from gold.report import ReportError, build_report_data
from gold.report.data import SUMMARY_COLUMNS, WINDOW_METRICS
from gold.report.vega import VEGA_LITE_VERSION
from pipelines.cli import main
from tests.unit.gold.report.gold_tables import gold_frames, write_gold


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory):
    return write_gold(tmp_path_factory.mktemp("gold") / "lakehouse", gold_frames())


class _Page(HTMLParser):
    """What a test needs from the page: links, scripts, JSON blocks, summary cells."""

    def __init__(self, html):
        super().__init__()
        self.urls, self.scripts, self.blocks, self.cells = [], [], {}, {}
        self.story, self.sections = "", []
        self._block, self._row, self._in_story = None, None, False
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.urls += [v for k, v in attrs.items() if k in ("src", "href") and v]
        if tag == "script":
            self.scripts.append(attrs)
            self._block = attrs.get("id")
        if tag == "tr":  # the summary table's rows; the numbers tables' have no class
            self._row = attrs["data-run-id"] if attrs.get("class") == "run-row" else None
        if tag == "td" and "data-column" in attrs and self._row:
            self.cells[(self._row, attrs["data-column"])] = attrs["data-value"]
        if tag == "h2":
            self.sections.append(attrs["id"])
        self._in_story = self._in_story or attrs.get("id") == "story"

    def handle_data(self, data):
        if self._block:
            self.blocks[self._block] = json.loads(data)
        if self._in_story:
            self.story += data

    def handle_endtag(self, tag):
        if tag == "script":
            self._block = None
        if tag == "p":
            self._in_story = False


def _report(warehouse, output, *extra):
    assert main(["report", "--warehouse", str(warehouse), "--output", str(output), *extra]) == 0
    return output.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def report_html(warehouse):
    """The report of every run, rendered once for the module."""
    return _report(warehouse, warehouse.parent / "report.html")


@pytest.fixture
def page(report_html):
    return _Page(report_html)


def test_report_is_self_contained(page):
    assert page.urls == []  # no src or href: scripts, styles and data are inline
    assert [s for s in page.scripts if "src" in s] == []
    assert set(page.blocks) == {"data-summary", "data-worker_load", "data-windows",
                                "data-dist_cost", "data-hot_keys", "data-capacity",
                                "data-utilisation", "data-busy", "specs"}  # fmt: skip
    specs = page.blocks["specs"]
    charts = {"latency", "capacity", "utilisation", "busy_workers", "busy_batches", "worker_load",
              "windows", "dist_cost"}  # fmt: skip
    assert set(specs) == {*charts, "hot_keys"}
    assert set(specs["hot_keys"]) == {"run-dkg"}  # the only run with a hot key
    assert page.sections == ["summary", "latency", "capacity", "utilisation", "worker-load",
                             "windows", "dist-cost", "busy", "hot-keys"]  # fmt: skip
    # Each spec is valid Vega-Lite: the reference compiler turns it into Vega.
    for spec in [*(specs[k] for k in sorted(charts)), specs["hot_keys"]["run-dkg"]]:
        compiled = vl_convert.vegalite_to_vega(spec, vl_version=VEGA_LITE_VERSION)
        assert "picked" in {signal["name"] for signal in compiled["signals"]}


def test_report_numbers_equal_gold(page):
    gold = gold_frames()
    metrics = gold["distribution_metrics"]
    cumulative = metrics[metrics["scope"] == "cumulative"].set_index("run_id")
    summary = page.blocks["data-summary"]
    assert [r["run_id"] for r in summary] == ["run-key", "run-dkg"]  # gold.runs start order
    for row in summary:
        for column in ("workers", *SUMMARY_COLUMNS):
            assert row[column] == cumulative.loc[row["run_id"], column]
            shown = float(page.cells[(row["run_id"], column)])
            assert shown == cumulative.loc[row["run_id"], column]
    labels = {r["run_id"]: r["label"] for r in summary}
    assert labels == {"run-key": "KEY", "run-dkg": "DYNAMIC_KEY"}
    loads = gold["worker_load"].groupby(["run_id", "worker"])["tuples"].sum()
    for run in page.blocks["data-worker_load"]:
        assert run["tuples"] == loads[run["run_id"]].tolist()
    assert page.blocks["data-worker_load"][0]["tuples"] == [100, 40, 10]
    windows = metrics[metrics["scope"] == "window"]
    for run in page.blocks["data-windows"]:
        rows = windows[windows["run_id"] == run["run_id"]].sort_values("window_start_ms")
        assert run["window_start_ms"] == rows["window_start_ms"].tolist()
        for metric in WINDOW_METRICS:
            assert run[metric] == rows[metric].tolist(), metric
    scatter = {r["run_id"]: (r["imbalance"], r["dist_cost"]) for r in page.blocks["data-dist_cost"]}
    assert scatter == {r: (cumulative.loc[r, "imbalance"], cumulative.loc[r, "dist_cost"])
                       for r in ("run-key", "run-dkg")}  # fmt: skip
    capacity = {r["run_id"]: (r["capacity"], r["capacity_vs_key"]) for r in page.blocks["data-capacity"]}
    assert capacity == {r: (cumulative.loc[r, "capacity"], cumulative.loc[r, "capacity_vs_key"])
                        for r in ("run-key", "run-dkg")}  # fmt: skip
    assert {"p50_ms", "p99_ms", "capacity", "capacity_vs_key"} <= set(SUMMARY_COLUMNS)


def test_the_story_is_written_from_golds_numbers(page):
    # By hand from gold_tables: 1 s per tuple at speed 1 in 60 s windows, so a worker
    # is busy tuples/60 of a window. KEY's worker 0 has 70 tuples in the first window
    # (70/60 >= 1) and p99 2000 + 1000 * 0.3 ms at worst. DYNAMIC_KEY's busiest worker
    # has 35 (35/60 < 1), p99 2000 + 1000 * 0.06 = 2.06 s, dist_cost 1.6 against KEY's
    # 1.0, and 150/52 tuples/s against KEY's 150/100. Offered: 0.8 x 3 x 1000 / 1000.
    assert page.story == (
        "KEY's worker 0 saturates at 1970-01-01 00:00 UTC (minute 0); its p99 reaches 2.30 s. "
        "DYNAMIC_KEY keeps p99 within 2.06 s for 60 % more merge work (dist_cost 1.60), with 1.92x "
        "KEY's capacity. Falling behind the offered arrival rate: KEY (capacity 1.5 of 2.4 "
        "tuples/s)."
    )

def test_hot_key_pools_are_the_largest_over_splitters(page):
    hot = {r["run_id"]: r for r in page.blocks["data-hot_keys"]}
    assert hot["run-key"]["keys"] == []
    assert (hot["run-key"]["snapshots"], hot["run-dkg"]["snapshots"]) == (0, 2)  # per splitter
    keys = {k["key"]: list(zip(k["as_of_ms"], k["pool_size"], strict=True))
            for k in hot["run-dkg"]["keys"]}  # fmt: skip
    assert keys == {"Turkey": [(15_000, 3), (30_000, 3), (75_000, 2)], "Spain": [(30_000, 2)]}
    assert [k["key"] for k in hot["run-dkg"]["keys"]] == ["Turkey", "Spain"]  # biggest pool first


def test_run_ids_choose_and_order_the_runs(warehouse, tmp_path):
    page = _Page(_report(warehouse, tmp_path / "one.html", "--run-id", "run-dkg"))
    assert [r["run_id"] for r in page.blocks["data-summary"]] == ["run-dkg"]
    assert [r["run_id"] for r in page.blocks["data-worker_load"]] == ["run-dkg"]
    assert page.blocks["specs"]["windows"]["params"][0] == {"name": "picked", "value": ["run-dkg"]}
    gold = gold_frames()
    data = build_report_data(gold["distribution_metrics"], gold["worker_load"], gold["runs"],
                             gold["hot_keys"], ["run-dkg", "run-key", "run-dkg"])  # fmt: skip
    assert [r["run_id"] for r in data.summary] == ["run-dkg", "run-key"]


def test_same_tables_same_report(warehouse, tmp_path, report_html):
    assert _report(warehouse, tmp_path / "again.html") == report_html


@pytest.mark.parametrize("case", ["no-warehouse", "no-gold", "unknown-run", "unwritable",
                                  "output-is-a-folder"])
def test_user_mistakes_are_one_line_errors(warehouse, tmp_path, capsys, case):
    # Every case fails before reading the tables, so these stay fast.
    argv = ["report", "--warehouse", str(warehouse), "--output", str(tmp_path / "r.html")]
    if case == "no-warehouse":
        argv[2] = str(tmp_path / "missing")
    elif case == "no-gold":
        (tmp_path / "empty").mkdir()
        argv[2] = str(tmp_path / "empty")
    elif case == "unknown-run":
        argv += ["--run-id", "nope"]
    elif case == "unwritable":
        argv[4] = str(tmp_path / "no-such-dir" / "r.html")
    else:
        argv[4] = str(tmp_path)
    assert main(argv) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    errors = [line for line in lines if line.startswith("dkg report: error: ")]
    assert len(errors) == 1 and "Traceback" not in "\n".join(lines)
    err = errors[0]
    expected = {"no-warehouse": "no warehouse", "no-gold": "no gold tables",
                "unknown-run": "unknown run id nope; known: run-dkg, run-key",
                "unwritable": "cannot write the report",
                "output-is-a-folder": "it is a folder"}[case]  # fmt: skip
    assert expected in err
    assert not (tmp_path / "r.html").exists()


def test_without_runs_table_runs_are_named_by_id():
    gold = gold_frames()
    data = build_report_data(gold["distribution_metrics"], gold["worker_load"])
    assert [r["label"] for r in data.summary] == ["run-dkg", "run-key"]
    assert all(r["grouping"] is None for r in data.summary)
    assert [h["keys"] for h in data.hot_keys] == [[], []]
    # A run with metrics but no gold.runs row (asked for by id) is named by its id.
    data = build_report_data(gold["distribution_metrics"], gold["worker_load"],
                             gold["runs"].iloc[:1], run_ids=["run-dkg"])  # fmt: skip
    assert [(r["label"], r["grouping"]) for r in data.summary] == [("run-dkg", None)]


def test_repeated_labels_are_told_apart_and_runs_without_metrics_left_out():
    gold = gold_frames()
    runs = gold["runs"].assign(label="KEY")
    pending = pd.DataFrame([{"run_id": "run-new", "label": "KEY", "grouping": "KEY",
                             "started_at": pd.Timestamp("2026-01-03", tz="UTC")}])  # fmt: skip
    runs = pd.concat([runs, pending], ignore_index=True)
    metrics = gold["distribution_metrics"]
    metrics.loc[metrics["run_id"] == "run-dkg", "workers"] = 4
    data = build_report_data(metrics, gold["worker_load"], runs)
    assert [r["label"] for r in data.summary] == ["KEY W=3", "KEY W=4"]
    assert data.worker_load[1]["tuples"] == [52, 49, 49, 0]  # an idle worker counts as 0
    with pytest.raises(ReportError, match="run-new has no gold metrics yet"):
        build_report_data(metrics, gold["worker_load"], runs, run_ids=["run-new"])
    same = metrics.assign(workers=3)
    labels = [r["label"] for r in build_report_data(same, gold["worker_load"], runs).summary]
    assert labels == ["KEY W=3 (run-key)", "KEY W=3 (run-dkg)"]


def test_at_most_eight_hot_keys_are_drawn_largest_pool_then_hottest_first():
    gold = gold_frames()
    keys = [f"k{i}" for i in range(10)]
    hot = pd.DataFrame({"run_id": "run-dkg", "splitter": 0, "as_of_ms": 30_000, "key": keys,
                        "pool_size": [2] * 9 + [3],
                        "estimated_share": [i / 100 for i in range(10)]})  # fmt: skip
    data = build_report_data(gold["distribution_metrics"], gold["worker_load"], gold["runs"], hot)
    run = {r["run_id"]: r for r in data.hot_keys}["run-dkg"]
    assert (run["total_keys"], run["snapshots"]) == (10, 1)
    assert [k["key"] for k in run["keys"]] == ["k9", "k8", "k7", "k6", "k5", "k4", "k3", "k2"]
