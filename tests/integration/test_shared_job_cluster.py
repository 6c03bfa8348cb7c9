"""One broker and one Spark session for a job run's tasks; one session for a file's statements.

``dkg`` runs as a process of its own, as a user runs it, from a folder that has
no ``conf/``: the job spec is named, not given as a path. The run record says
which broker and Spark application each task used.
"""

from __future__ import annotations

import json
import os

import pytest

from tests.dkg_process import dkg

pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.timeout(900)]

ENV = {"DKG_RUN__QUALITY_GATES": "false"}  # the quality gates: tests/integration/quality
PARAMS = [f"--param={p}" for p in ("dataset=COUNTRY_SKEW_R80", "messages=1000", "rate=2000",
                                   "topic=shared", "partitions=2", "workers=4", "grouping=KEY")]  # fmt: skip


@pytest.fixture(scope="module")
def job(tmp_path_factory):
    cwd = tmp_path_factory.mktemp("elsewhere")
    done = dkg(["job", "run", "lakehouse", "--warehouse", "wh", *PARAMS], cwd, ENV, timeout_s=800)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (path,) = (cwd / "wh" / "_jobs" / "lakehouse").glob("*.json")
    return cwd, done, json.loads(path.read_text())


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_the_tasks_share_one_broker_and_one_spark_session(job):
    _cwd, _done, record = job
    tasks = record["tasks"]
    assert list(tasks) == ["produce", "run", "summary"]
    assert all(t["status"] == "succeeded" and t["note"] == "" for t in tasks.values())
    broker = tasks["produce"]["broker_pid"]
    assert broker is not None and tasks["run"]["broker_pid"] == broker
    assert tasks["summary"]["broker_pid"] is None  # a query needs no broker
    spark = tasks["run"]["spark_application"]
    assert spark is not None and tasks["summary"]["spark_application"] == spark
    assert tasks["produce"]["spark_application"] is None
    assert not _alive(broker)  # the job stopped the broker it started


def test_the_job_prints_its_result_table(job):
    _cwd, done, _record = job
    result = done.stdout.split("\nsummary:\n", 1)[1].splitlines()
    assert result[0].split()[:2] == ["label", "workers"]
    assert result[2].split()[:2] == ["KEY", "4"]
    assert result[3].startswith("job lakehouse run ") and "succeeded" in result[3]


def test_a_file_of_statements_runs_in_one_session(job):
    cwd, _done, _record = job
    (cwd / "several.sql").write_text(
        "CREATE OR REPLACE TEMP VIEW picked AS SELECT label, tuples FROM gold.run_comparison;\n"
        "SET spark.app.id;\n"
        "SELECT label, tuples FROM picked; -- a temporary view: only its own session sees it\n"
        "SET spark.app.id;\n",
        encoding="utf-8",
    )
    done = dkg(["sql", "--file", "several.sql", "--warehouse", "wh", "--json"], cwd, ENV)
    assert done.returncode == 0, done.stderr[-3000:]
    results = [json.loads(line) for line in done.stdout.splitlines()]
    assert [r["line"] for r in results] == [1, 2, 3, 4]
    assert results[0]["rows"] == []
    assert results[2]["rows"] == [{"label": "KEY", "tuples": 1000}]
    first, second = (r["rows"][0]["value"] for r in (results[1], results[3]))
    assert first == second and first.startswith("local-")
