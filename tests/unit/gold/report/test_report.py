"""`dkg report` on small hand-built gold tables: renders offline, and shows gold's numbers."""

from __future__ import annotations

import base64
import json
from html.parser import HTMLParser
from pathlib import Path

import pandas as pd
import pytest

from core.tables import DeltaRsBackend
from core.warehouse import Warehouse
from gold.report import ReportError, build_report_data
from pipelines.cli import main

METRIC_COLUMNS = ["workers", "tuples", "distinct_keys", "stddev_pct", "imbalance", "skew_s",
                  "e_lb", "dist_cost", "throughput", "p50_ms", "p99_ms", "makespan_ms"]  # fmt: skip


def _metric(run_id, scope, start, workers, imbalance, dist_cost, tuples=100):
    values = [workers, tuples, 5, imbalance * 50, imbalance, imbalance / 2, imbalance * 1.5,
              dist_cost, 1234.5678, 1.0, 2.0 + imbalance, 99.0]  # fmt: skip
    return {"run_id": run_id, "scope": scope, "window_start_ms": start,
            **dict(zip(METRIC_COLUMNS, values, strict=True))}  # fmt: skip


def _gold_frames():
    metrics = pd.DataFrame([
        _metric("run-key", "cumulative", -1, 3, 0.2666666666666667, 1.0, 150),
        _metric("run-key", "window", 0, 3, 0.3, 1.0),
        _metric("run-key", "window", 60_000, 3, 0.2, 1.0, 50),
        _metric("run-dkg", "cumulative", -1, 3, 0.04, 1.6, 150),
        _metric("run-dkg", "window", 0, 3, 0.06, 1.4),
        _metric("run-dkg", "window", 60_000, 3, 0.01, 1.2, 50),
    ])  # fmt: skip
    loads = {"run-key": [[70, 20, 10], [30, 20, 0]], "run-dkg": [[35, 33, 32], [17, 16, 17]]}
    worker_load = pd.DataFrame([
        {"run_id": run, "window_start_ms": w * 60_000, "worker": worker, "tuples": t, "keys": 1}
        for run, windows in loads.items() for w, row in enumerate(windows)
        for worker, t in enumerate(row)
    ]).astype({"worker": "int32"})  # fmt: skip
    runs = pd.DataFrame([
        {"run_id": "run-key", "source": "COUNTRY_SKEW_R80", "grouping": "KEY", "label": "KEY",
         "workers": 3, "status": "succeeded", "started_at": pd.Timestamp("2026-01-01", tz="UTC")},
        {"run_id": "run-dkg", "source": "COUNTRY_SKEW_R80", "grouping": "DYNAMIC_KEY",
         "label": "DYNAMIC_KEY", "workers": 3, "status": "succeeded",
         "started_at": pd.Timestamp("2026-01-02", tz="UTC")},
    ])  # fmt: skip
    hot_keys = pd.DataFrame([
        ("run-dkg", 0, 15_000, "Turkey", 2), ("run-dkg", 1, 15_000, "Turkey", 3),
        ("run-dkg", 0, 30_000, "Turkey", 3), ("run-dkg", 0, 30_000, "Spain", 2),
        ("run-dkg", 1, 75_000, "Turkey", 2),
    ], columns=["run_id", "splitter", "as_of_ms", "key", "pool_size"]).assign(
        workers=lambda f: [[0, 1]] * len(f), estimated_share=0.5, reason="hot")  # fmt: skip
    return {"distribution_metrics": metrics, "worker_load": worker_load, "runs": runs,
            "hot_keys": hot_keys.astype({"splitter": "int32", "pool_size": "int32"})}  # fmt: skip


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory):
    root = Warehouse(tmp_path_factory.mktemp("gold") / "lakehouse")
    backend = DeltaRsBackend()
    for name, frame in _gold_frames().items():
        backend.append(root.table_uri("gold", name), frame, "test", 0)
    return Path(root.root)


class _Page(HTMLParser):
    """What a test needs from the page: links, images, JSON blocks, summary cells."""

    def __init__(self, html):
        super().__init__()
        self.urls, self.images, self.blocks, self.cells = [], [], {}, {}
        self._block, self._row = None, None
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.urls += [v for k, v in attrs.items() if k in ("src", "href") and v]
        if tag == "img":
            self.images.append(attrs["src"])
        if tag == "script":
            self._block = attrs.get("id")
        if tag == "tr" and "data-run-id" in attrs:
            self._row = attrs["data-run-id"]
        if tag == "td" and "data-column" in attrs:
            self.cells[(self._row, attrs["data-column"])] = attrs["data-value"]

    def handle_data(self, data):
        if self._block:
            self.blocks[self._block] = json.loads(data)

    def handle_endtag(self, tag):
        if tag == "script":
            self._block = None


def _report(warehouse, output, *extra):
    assert main(["report", "--warehouse", str(warehouse), "--output", str(output), *extra]) == 0
    return output.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def report_html(warehouse):
    """The report of every run, rendered once for the module (drawing takes ~1 s)."""
    return _report(warehouse, warehouse.parent / "report.html")


@pytest.fixture
def page(report_html):
    return _Page(report_html)


def test_report_is_self_contained(page):
    assert len(page.images) == 4
    for src in page.images:
        assert src.startswith("data:image/png;base64,")
        assert base64.b64decode(src.split(",", 1)[1]).startswith(b"\x89PNG\r\n\x1a\n")
    assert all(url.startswith("data:") for url in page.urls)
    assert set(page.blocks) == {"data-summary", "data-worker_load", "data-imbalance",
                                "data-dist_cost", "data-hot_keys"}  # fmt: skip


def test_report_numbers_equal_gold(page):
    gold = _gold_frames()
    metrics = gold["distribution_metrics"]
    cumulative = metrics[metrics["scope"] == "cumulative"].set_index("run_id")
    summary = page.blocks["data-summary"]
    assert [r["run_id"] for r in summary] == ["run-key", "run-dkg"]  # gold.runs start order
    for row in summary:
        for column in ("workers", "tuples", "imbalance", "stddev_pct", "dist_cost", "p99_ms",
                       "throughput"):  # fmt: skip
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
    for run in page.blocks["data-imbalance"]:
        rows = windows[windows["run_id"] == run["run_id"]].sort_values("window_start_ms")
        assert run["window_start_ms"] == rows["window_start_ms"].tolist()
        assert run["imbalance"] == rows["imbalance"].tolist()
    scatter = {r["run_id"]: (r["imbalance"], r["dist_cost"]) for r in page.blocks["data-dist_cost"]}
    assert scatter == {r: (cumulative.loc[r, "imbalance"], cumulative.loc[r, "dist_cost"])
                       for r in ("run-key", "run-dkg")}  # fmt: skip


def test_hot_key_pools_are_the_largest_over_splitters(page):
    hot = {r["run_id"]: r for r in page.blocks["data-hot_keys"]}
    assert hot["run-key"]["keys"] == []
    keys = {k["key"]: list(zip(k["as_of_ms"], k["pool_size"], strict=True))
            for k in hot["run-dkg"]["keys"]}  # fmt: skip
    assert keys == {"Turkey": [(15_000, 3), (30_000, 3), (75_000, 2)], "Spain": [(30_000, 2)]}
    assert [k["key"] for k in hot["run-dkg"]["keys"]] == ["Turkey", "Spain"]  # biggest pool first


def test_run_ids_choose_and_order_the_runs(warehouse, tmp_path):
    page = _Page(_report(warehouse, tmp_path / "one.html", "--run-id", "run-dkg"))
    assert [r["run_id"] for r in page.blocks["data-summary"]] == ["run-dkg"]
    assert [r["run_id"] for r in page.blocks["data-worker_load"]] == ["run-dkg"]
    assert len(page.images) == 4
    gold = _gold_frames()
    data = build_report_data(gold["distribution_metrics"], gold["worker_load"], gold["runs"],
                             gold["hot_keys"], ["run-dkg", "run-key", "run-dkg"])  # fmt: skip
    assert [r["run_id"] for r in data.summary] == ["run-dkg", "run-key"]


def test_same_tables_same_report(warehouse, tmp_path, report_html):
    assert _report(warehouse, tmp_path / "again.html") == report_html


@pytest.mark.parametrize("case", ["no-warehouse", "no-gold", "unknown-run", "unwritable",
                                  "output-is-a-folder"])
def test_user_mistakes_are_one_line_errors(warehouse, tmp_path, capsys, case):
    # Every case fails before drawing, so these stay fast.
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
    gold = _gold_frames()
    data = build_report_data(gold["distribution_metrics"], gold["worker_load"])
    assert [r["label"] for r in data.summary] == ["run-dkg", "run-key"]
    assert all(r["grouping"] is None for r in data.summary)
    assert [h["keys"] for h in data.hot_keys] == [[], []]
    # A run with metrics but no gold.runs row (asked for by id) is named by its id.
    data = build_report_data(gold["distribution_metrics"], gold["worker_load"],
                             gold["runs"].iloc[:1], run_ids=["run-dkg"])  # fmt: skip
    assert [(r["label"], r["grouping"]) for r in data.summary] == [("run-dkg", None)]


def test_repeated_labels_are_told_apart_and_runs_without_metrics_left_out():
    gold = _gold_frames()
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
    gold = _gold_frames()
    keys = [f"k{i}" for i in range(10)]
    hot = pd.DataFrame({"run_id": "run-dkg", "splitter": 0, "as_of_ms": 30_000, "key": keys,
                        "pool_size": [2] * 9 + [3],
                        "estimated_share": [i / 100 for i in range(10)]})  # fmt: skip
    data = build_report_data(gold["distribution_metrics"], gold["worker_load"], gold["runs"], hot)
    run = {r["run_id"]: r for r in data.hot_keys}["run-dkg"]
    assert run["total_keys"] == 10
    assert [k["key"] for k in run["keys"]] == ["k9", "k8", "k7", "k6", "k5", "k4", "k3", "k2"]
