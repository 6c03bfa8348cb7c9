"""conf/jobs/lakehouse.yml end to end (real broker, one process per task), then every
gold view and every example query of conf/sql against the warehouse it built."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pyarrow as pa
import pytest

from core.tables import DeltaRsBackend, register_tables
from core.warehouse import Warehouse
from gold.views import register_views, view_definitions
from pipelines.cli import main

pytestmark = [pytest.mark.spark, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
MESSAGES = 800
BAD_PAYLOADS = [b"\xff\xfe not utf-8", b"\xc3\x28", b"{not json"]
SPEC = str(REPO / "conf" / "jobs" / "lakehouse.yml")
# 800 messages over 8 s of event time: enough for DYNAMIC_KEY to find and split the hot key.
PARAMS = [f"--param={p}" for p in (
    "dataset=COUNTRY_SKEW_R80", f"messages={MESSAGES}", "rate=100", "topic=skewed",
    "partitions=2", "workers=4", "grouping=KEY,DYNAMIC_KEY")]


def _dkg(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(list(argv))
    return code, out.getvalue()


def _quarantine_rows(root: Path) -> None:
    """Malformed messages as the parser quarantines them, appended to the job's
    (empty) silver.quarantine in its own schema: quarantine_reasons.sql needs rows."""
    path = Warehouse(root).table_uri("silver", "quarantine")
    schema = DeltaRsBackend().read(path).schema
    reasons = ["not_utf8", "not_utf8", "not_json"]
    columns = {
        "run_id": ["bad-input"] * 3, "splitter": [0] * 3, "partition": [0] * 3,
        "offset": [5, 9, 12], "error": reasons, "payload": BAD_PAYLOADS,
    }  # fmt: skip
    table = pa.table({f.name: pa.array(columns.get(f.name, [None] * 3), f.type) for f in schema})
    DeltaRsBackend().append(str(path), table, "test-quarantine", 0)


@pytest.fixture(scope="module")
def job(spark, tmp_path_factory):  # ~1-2 min: three task processes, two of them Spark
    """Run the lakehouse job spec once: KEY and DYNAMIC_KEY over a skewed dataset."""
    base = tmp_path_factory.mktemp("job")
    root = base / "lakehouse"
    code, output = _dkg("job", "run", SPEC, "--warehouse", str(root), *PARAMS)
    _quarantine_rows(root)
    register_tables(spark, Warehouse(root))
    register_views(spark)
    return {"root": root, "code": code, "output": output}


def _record(root: Path) -> dict:
    (path,) = (root / "_jobs" / "lakehouse").glob("*.json")
    return json.loads(path.read_text())


def test_job_spec_runs_every_task_and_resume_skips_them(job):
    assert job["code"] == 0, job["output"]
    record = _record(job["root"])
    assert record["status"] == "succeeded"
    assert list(record["tasks"]) == ["produce", "run", "summary"]
    assert all(t["status"] == "succeeded" and t["exit_code"] == 0 for t in record["tasks"].values())
    summary = Path(record["tasks"]["summary"]["log"]).read_text()
    assert "DYNAMIC_KEY" in summary and "KEY" in summary and "dist_cost" in summary
    # Resuming a finished run runs nothing: every task is reported as done before.
    code, output = _dkg("job", "run", SPEC, "--warehouse", str(job["root"]), "--resume", *PARAMS)
    assert code == 0
    assert output.count("succeeded earlier") == 3
    assert _record(job["root"])["tasks"] == record["tasks"] | {
        k: {**t, "note": "succeeded earlier"} for k, t in record["tasks"].items()}


def test_run_comparison_view_equals_cumulative_metrics(spark, job):
    from chispa import assert_df_equality

    backend = DeltaRsBackend()
    metrics = backend.read(Warehouse(job["root"]).table_uri("gold", "distribution_metrics")).to_pandas()
    runs = backend.read(Warehouse(job["root"]).table_uri("gold", "runs")).to_pandas()
    cumulative = metrics[metrics["scope"] == "cumulative"].merge(runs[["run_id", "label"]])
    columns = ["label", "imbalance", "stddev_pct", "dist_cost", "p99_ms", "throughput", "tuples"]
    expected = spark.createDataFrame(cumulative[columns])
    actual = spark.table("gold.run_comparison").select(*columns)
    assert_df_equality(actual, expected, ignore_row_order=True, ignore_nullable=True,
                       ignore_column_order=True)  # fmt: skip
    assert sorted(cumulative["label"]) == ["DYNAMIC_KEY", "KEY"]


def test_window_metrics_view_adds_up_to_each_run(spark, job):
    rows = spark.sql("""
        SELECT w.label, SUM(w.tuples) AS window_tuples, MAX(c.tuples) AS run_tuples, COUNT(*) AS n
        FROM gold.window_metrics AS w JOIN gold.run_comparison AS c USING (run_id)
        GROUP BY w.label""").collect()  # fmt: skip
    assert {r.label for r in rows} == {"KEY", "DYNAMIC_KEY"}
    assert all(r.window_tuples == r.run_tuples and r.n >= 1 for r in rows)
    assert set(view_definitions()) >= {"run_comparison", "window_metrics"}


@pytest.fixture(scope="module")
def queries(job) -> dict[str, list[dict]]:
    """Every conf/sql/*.sql through `dkg sql --file --json`: {file stem: rows}."""
    results = {}
    for path in sorted((REPO / "conf" / "sql").glob("*.sql")):
        code, output = _dkg("sql", "--file", str(path), "--warehouse", str(job["root"]), "--json",
                            "--limit", "1000")  # fmt: skip
        assert code == 0, path
        results[path.stem] = json.loads(output)
    return results


def test_every_example_query_is_checked(queries):
    assert sorted(queries) == ["compare_groupings", "hot_keys", "quarantine_reasons",
                               "worker_load_spread"]  # fmt: skip


def test_compare_groupings_ranks_dynamic_key_above_key(queries):
    rows = queries["compare_groupings"]
    assert [r["label"] for r in rows] == ["DYNAMIC_KEY", "KEY"]  # best balance first
    assert all(r["tuples"] == MESSAGES and r["workers"] == 4 for r in rows)
    assert rows[0]["imbalance"] < rows[1]["imbalance"]
    assert rows[1]["dist_cost"] == 1.0 <= rows[0]["dist_cost"] <= 4


def test_hot_keys_query_shows_the_hot_country_split(spark, queries):
    rows = queries["hot_keys"]
    dkg = [r for r in rows if r["label"] == "DYNAMIC_KEY"]
    assert dkg and dkg[0]["key"] == "Turkey" and dkg[0]["max_pool_size"] > 1
    total = spark.sql("SELECT SUM(k.count) AS n FROM gold.key_counts k JOIN gold.runs r USING (run_id) "
                      "WHERE r.label = 'DYNAMIC_KEY' AND k.key = 'Turkey'").first().n  # fmt: skip
    assert dkg[0]["total_count"] == total


def test_worker_load_spread_accounts_for_every_tuple(queries):
    rows = queries["worker_load_spread"]
    by_label: dict[str, list[dict]] = {}
    for row in rows:
        by_label.setdefault(row["label"], []).append(row)
    assert sorted(by_label) == ["DYNAMIC_KEY", "KEY"]
    for windows in by_label.values():
        assert sum(w["tuples"] for w in windows) == MESSAGES
        assert all(w["min_tuples"] <= w["max_tuples"] and w["max_over_mean"] >= 1 for w in windows)
    worst = {label: max(w["max_over_mean"] for w in ws) for label, ws in by_label.items()}
    assert worst["KEY"] > worst["DYNAMIC_KEY"]


def test_quarantine_reasons_count_the_malformed_messages(job, queries):
    rows = queries["quarantine_reasons"]
    quarantine = DeltaRsBackend().read(Warehouse(job["root"]).table_uri("silver", "quarantine"))
    expected = quarantine.to_pandas().groupby(["run_id", "error"]).size().to_dict()
    assert {(r["run_id"], r["reason"]): r["messages"] for r in rows} == expected
    assert [(r["reason"], r["messages"]) for r in rows if r["run_id"] == "bad-input"] == [
        ("not_utf8", 2), ("not_json", 1)]
    assert rows[0]["example"].startswith("\ufffd")  # the first bad payload, decoded lossily


def test_an_empty_table_reads_as_no_rows(spark, tmp_path):
    from core.tables import read_delta

    schema = pa.schema([("run_id", pa.string()), ("error", pa.string())])
    DeltaRsBackend().append(str(tmp_path / "empty"), schema.empty_table(), "empty", 0)
    assert read_delta(spark, str(tmp_path / "empty")).count() == 0
