"""The job specs as the pages run them, then every gold view and example query on a job's warehouse.

``conf/jobs/lakehouse.yml`` runs as shown (20,000 ZIPF messages, KEY and
DYNAMIC_KEY). Here its Spark tasks run in processes of their own: this
process's Spark session (the tests') is not the one the job's settings ask for;
tests/integration/test_shared_job_cluster.py runs a job whose tasks share one. Its
warehouse is the page's ``/tmp/wh``: it answers the page's query, the gold views
and every ``conf/sql`` example, each checked against the tables read with delta-rs.
``compare_groupings.yml`` is not run here: see :data:`NOT_RUN`.
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pyarrow as pa
import pytest

from core.config import load_settings
from core.tables import DeltaRsBackend, register_tables
from core.warehouse import Warehouse
from gold.views import register_views, view_definitions
from pipelines.cli import main
from pipelines.commands.simulate import dataset_spec
from tests.documented_commands import REPO
from tests.exact_counts import dataset_counts, gold_counts
from tests.integration.documented.shown import (
    Scenario,
    cumulative_metrics,
    read_table,
    text_rows,
)

pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.timeout(600)]

ENV = {"DKG_RUN__QUALITY_GATES": "false"}  # the tasks' gates: tests/integration/quality
MESSAGES = 20_000  # the job's messages, as the page gives them
GROUPINGS = ["DYNAMIC_KEY", "KEY"]
BAD_PAYLOADS = [b"\xff\xfe not utf-8", b"\xc3\x28", b"{not json"]

LAKEHOUSE = (
    ".venv/bin/dkg job run conf/jobs/lakehouse.yml --param grouping=KEY,DYNAMIC_KEY "
    "--param messages=20000"
)
COMPARE_SQL = ".venv/bin/dkg sql --file conf/sql/compare_groupings.sql --warehouse /tmp/wh"
COMMANDS = (LAKEHOUSE, COMPARE_SQL)
COMPARE = ".venv/bin/dkg job run conf/jobs/compare_groupings.yml --warehouse /tmp/wh"
NOT_RUN = {
    command: "nine tasks, seven of them `dkg run` over 50,000 messages (about 2.5 min on one "
    "shared Spark session, docs/jobs-and-sql.md; here each would start its own, as this "
    "process's session is not the job's): more than this suite's budget for one page's "
    "example. The runner, its run record and every console script run with lakehouse.yml "
    "above, a shared session in tests/integration/test_shared_job_cluster.py; --resume in "
    "tests/unit/pipelines/test_job_specs.py; `dkg job validate` resolves compare_groupings.yml "
    "in tests/unit/test_documented_commands.py"
    for command in (COMPARE, f"{COMPARE} --resume")
}
"""Shown commands this module does not run, and why."""


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
def jobs(spark, tmp_path_factory) -> Scenario:  # three tasks, two of them Spark
    folder = tmp_path_factory.mktemp("jobs")
    # The page's /tmp/wh is a warehouse a job wrote: here, the lakehouse job's.
    scenario = Scenario(
        folder,
        {**ENV, "DKG_KAFKA__EMBEDDED__RUN_DIR": str(folder / "kafka")},
        {"wh": str(folder / "lakehouse")},
    )
    if scenario.run(LAKEHOUSE).code == 0:
        _quarantine_rows(_warehouse(scenario))
        scenario.run(COMPARE_SQL)
        register_tables(spark, Warehouse(_warehouse(scenario)))
        register_views(spark)
    return scenario


def _warehouse(jobs: Scenario) -> Path:
    return jobs.folder / "lakehouse"


def _record(root: Path, job: str) -> dict:
    (path,) = (root / "_jobs" / job).glob("*.json")
    return json.loads(path.read_text())


def test_the_lakehouse_job_runs_as_shown(jobs):
    done = jobs.last(LAKEHOUSE)
    assert done.code == 0, done
    root = _warehouse(jobs)
    record = _record(root, "lakehouse")
    assert record["status"] == "succeeded"
    assert list(record["tasks"]) == ["produce", "run", "summary"]
    assert all(t["status"] == "succeeded" and t["exit_code"] == 0 for t in record["tasks"].values())
    runs = read_table(root / "gold" / "runs")
    assert sorted(runs["label"]) == GROUPINGS
    env = {"DKG_DATASET__MESSAGES": "20000", "DKG_DATASET__RATE": "2000"}  # the job's parameters
    expected = dataset_counts([dataset_spec(load_settings(env=env).settings)])
    assert all(counts == expected for counts in gold_counts(root).values())
    summary = Path(record["tasks"]["summary"]["log"]).read_text()
    assert all(label in summary for label in GROUPINGS) and "dist_cost" in summary


def test_the_pages_query_ranks_the_groupings(jobs):
    done = jobs.last(COMPARE_SQL)
    assert done.code == 0, done
    expected = cumulative_metrics(_warehouse(jobs)).sort_values(["imbalance", "dist_cost", "label"])
    assert [r["label"] for r in text_rows(done.out)] == expected["label"].tolist()


def test_run_comparison_view_equals_cumulative_metrics(spark, jobs):
    from chispa import assert_df_equality

    cumulative = cumulative_metrics(_warehouse(jobs))
    columns = ["label", "imbalance", "stddev_pct", "dist_cost", "p99_ms", "throughput", "tuples"]
    expected = spark.createDataFrame(cumulative[columns])
    actual = spark.table("gold.run_comparison").select(*columns)
    assert_df_equality(actual, expected, ignore_row_order=True, ignore_nullable=True,
                       ignore_column_order=True)  # fmt: skip
    assert sorted(cumulative["label"]) == GROUPINGS


def test_window_metrics_view_adds_up_to_each_run(spark, jobs):
    rows = spark.sql("""
        SELECT w.label, SUM(w.tuples) AS window_tuples, MAX(c.tuples) AS run_tuples, COUNT(*) AS n
        FROM gold.window_metrics AS w JOIN gold.run_comparison AS c USING (run_id)
        GROUP BY w.label""").collect()  # fmt: skip
    assert sorted(r.label for r in rows) == GROUPINGS
    assert all(r.window_tuples == r.run_tuples and r.n >= 1 for r in rows)
    assert set(view_definitions()) >= {"run_comparison", "window_metrics"}


@pytest.fixture(scope="module")
def queries(jobs) -> dict[str, list[dict]]:
    """Every conf/sql/*.sql through `dkg sql --file --json`: {file stem: rows}."""
    results = {}
    for path in sorted((REPO / "conf" / "sql").glob("*.sql")):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            code = main(["sql", "--file", str(path), "--warehouse", str(_warehouse(jobs)),
                         "--json", "--limit", "1000"])  # fmt: skip
        assert code == 0, path
        results[path.stem] = json.loads(out.getvalue())
    return results


def test_every_example_query_is_checked(queries):
    assert sorted(queries) == ["compare_groupings", "hot_keys", "quarantine_reasons",
                               "worker_load_spread"]  # fmt: skip


def test_compare_groupings_ranks_dynamic_key_above_key(queries):
    rows = queries["compare_groupings"]
    assert [r["label"] for r in rows] == GROUPINGS  # best balance first
    assert all(r["tuples"] == MESSAGES and r["workers"] == 10 for r in rows)
    assert rows[0]["imbalance"] < rows[1]["imbalance"]
    assert rows[1]["dist_cost"] == 1.0 <= rows[0]["dist_cost"] <= 10


def test_hot_keys_query_shows_the_hottest_key_split(queries, jobs):
    rows = [r for r in queries["hot_keys"] if r["label"] == "DYNAMIC_KEY"]
    counts = read_table(_warehouse(jobs) / "gold" / "key_counts")
    runs = read_table(_warehouse(jobs) / "gold" / "runs").set_index("label")
    mine = counts[counts["run_id"] == runs.at["DYNAMIC_KEY", "run_id"]]
    totals = mine.groupby("key")["count"].sum()
    assert rows and rows[0]["key"] == totals.idxmax() and rows[0]["max_pool_size"] > 1
    assert all(r["total_count"] == totals[r["key"]] for r in rows)


def test_worker_load_spread_accounts_for_every_tuple(queries):
    rows = queries["worker_load_spread"]
    by_label: dict[str, list[dict]] = {}
    for row in rows:
        by_label.setdefault(row["label"], []).append(row)
    assert sorted(by_label) == GROUPINGS
    for windows in by_label.values():
        assert sum(w["tuples"] for w in windows) == MESSAGES
        assert all(w["min_tuples"] <= w["max_tuples"] and w["max_over_mean"] >= 1 for w in windows)
    worst = {label: max(w["max_over_mean"] for w in ws) for label, ws in by_label.items()}
    assert worst["KEY"] > worst["DYNAMIC_KEY"]


def test_quarantine_reasons_count_the_malformed_messages(jobs, queries):
    rows = queries["quarantine_reasons"]
    quarantine = read_table(_warehouse(jobs) / "silver" / "quarantine")
    expected = quarantine.groupby(["run_id", "error"]).size().to_dict()
    assert {(r["run_id"], r["reason"]): r["messages"] for r in rows} == expected
    assert [(r["reason"], r["messages"]) for r in rows if r["run_id"] == "bad-input"] == [
        ("not_utf8", 2),
        ("not_json", 1),
    ]
    assert rows[0]["example"].startswith("\ufffd")  # the first bad payload, decoded lossily


def test_an_empty_table_reads_as_no_rows(spark, tmp_path):
    from core.tables import read_delta

    schema = pa.schema([("run_id", pa.string()), ("error", pa.string())])
    DeltaRsBackend().append(str(tmp_path / "empty"), schema.empty_table(), "empty", 0)
    assert read_delta(spark, str(tmp_path / "empty")).count() == 0
