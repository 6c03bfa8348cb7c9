"""`dkg report` over a real finite run: the numbers it shows equal gold's, as Spark reads them."""

from __future__ import annotations

import json
import re

import pytest

from bronze.datasets.base import DatasetSpec
from core.config import RunConfig
from core.run_plan import RunPlan
from core.tables import DeltaRsBackend, read_delta, read_delta_stream
from core.warehouse import Warehouse
from gold.runs import record_run, run_row
from pipelines.cli import main
from pipelines.medallion import run_finite
from tests.integration.topic_tables import write_topic_table

pytestmark = [pytest.mark.spark, pytest.mark.slow]

# Two groupings over one small topic: the report compares runs. Each finite run
# costs several streaming queries, so the topic stays small.
GROUPINGS = ("KEY", "DYNAMIC_KEY")


def _topic_table(path, messages: int, partitions: int) -> None:
    # 5 messages/s of event time: the run spans several 60 s gold windows.
    spec = DatasetSpec(name="COUNTRY_SKEW_R80", messages=messages, rate=5, seed=11)
    write_topic_table(path, spec, partitions)


def _blocks(html: str) -> dict[str, list]:
    pattern = r'<script type="application/json" id="data-(\w+)">(.*?)</script>'
    return {name: json.loads(body) for name, body in re.findall(pattern, html, re.S)}


def test_report_of_a_finite_run_shows_golds_numbers(spark, tmp_path):
    _topic_table(tmp_path / "topic", 1200, partitions=2)
    warehouse = Warehouse(tmp_path / "lakehouse")
    backend = DeltaRsBackend()
    for name in GROUPINGS:
        run_id = f"report-{name.lower()}"
        spec = RunPlan(run_id=run_id, source_type="COUNTRY_SKEW_R80", grouping=name,
                       splitters=2, run=RunConfig(workers=4), label=name,
                       source="COUNTRY_SKEW_R80", topic="countries", messages=1200)  # fmt: skip
        record_run(backend, warehouse, run_row(spec, status="succeeded"))
        run_finite(spark, read_delta_stream(spark, str(tmp_path / "topic")), spec, warehouse,
                   backend)  # fmt: skip

    output = tmp_path / "report.html"
    assert main(["report", "--warehouse", str(warehouse.root), "--output", str(output)]) == 0
    html = output.read_text(encoding="utf-8")
    markup = re.sub(r"<script[^>]*>.*?</script>", "", html, flags=re.S)
    assert not re.search(r'(src|href)="', markup)  # scripts, styles and data all inline
    blocks = _blocks(html)

    def gold(name):
        return read_delta(spark, str(warehouse.table_uri("gold", name))).toPandas()

    metrics = gold("distribution_metrics")
    cumulative = metrics[metrics["scope"] == "cumulative"].set_index("run_id")
    assert [r["run_id"] for r in blocks["summary"]] == ["report-key", "report-dynamic_key"]
    for row in blocks["summary"]:
        expected = cumulative.loc[row["run_id"]]
        assert row["tuples"] == 1200
        for column in ("workers", "imbalance", "stddev_pct", "dist_cost", "p99_ms", "throughput"):
            assert row[column] == expected[column], column
    loads = gold("worker_load").groupby(["run_id", "worker"])["tuples"].sum()
    for run in blocks["worker_load"]:
        assert run["tuples"] == loads[run["run_id"]].reindex(range(4), fill_value=0).tolist()
        assert sum(run["tuples"]) == 1200
    windows = metrics[metrics["scope"] == "window"].sort_values("window_start_ms")
    for run in blocks["windows"]:
        rows = windows[windows["run_id"] == run["run_id"]]
        assert len(rows) >= 3
        assert run["window_start_ms"] == rows["window_start_ms"].tolist()
        for column in ("imbalance", "p50_ms", "p99_ms"):
            assert run[column] == rows[column].tolist(), column
    runs = gold("runs").set_index("run_id")
    for run in blocks["capacity"]:
        assert run["capacity"] == cumulative.loc[run["run_id"], "capacity"]
        assert run["capacity_vs_key"] == cumulative.loc[run["run_id"], "capacity_vs_key"]
        assert run["offered_per_s"] is None  # the plans set no load
    # The busiest worker's tuples x process_ms over the 60 s window's wall time (speed 1).
    peaks = gold("worker_load").groupby(["run_id", "window_start_ms"])["tuples"].max()
    for run in blocks["utilisation"]:
        settings = runs.loc[run["run_id"]]
        assert run["window_ms"] == RunConfig().aggregation_window_ms == 60_000
        assert run["tuples"] == peaks[run["run_id"]].tolist()
        assert run["utilisation"] == pytest.approx(
            [t * settings["process_ms"] * settings["speed"] / 60_000 for t in run["tuples"]])
    assert blocks["busy"] == []  # work=model: no run measured busy time
    assert '<p class="story" id="story">KEY&#39;s ' in html
    hot = gold("hot_keys")
    pools = hot.groupby(["run_id", "key", "as_of_ms"])["pool_size"].max()
    shown = {r["run_id"]: r for r in blocks["hot_keys"]}
    assert shown["report-key"]["keys"] == []
    assert shown["report-dynamic_key"]["total_keys"] == hot.loc[
        hot["run_id"] == "report-dynamic_key", "key"].nunique()  # fmt: skip
    assert shown["report-dynamic_key"]["keys"], "the R80 hot country should get a pool"
    for key in shown["report-dynamic_key"]["keys"]:
        series = pools["report-dynamic_key"][key["key"]]
        assert key["as_of_ms"] == series.index.tolist()
        assert key["pool_size"] == series.tolist()
