"""``dkg run`` and ``dkg sql`` on a warehouse in object storage, as the pages show them.

``s3://lake/dkg`` is a bucket of a real S3 server (moto), reached through the
``AWS_*`` variables the page exports. What landed in the bucket is read with
delta-rs and pyarrow directly and compared with the generator's own data; the
check and the report of that warehouse read it back from the bucket too.
"""

from __future__ import annotations

import re

import pyarrow.fs as pafs
import pytest

from core.config import load_settings
from pipelines.commands.simulate import dataset_spec
from tests.exact_counts import dataset_counts, gold_counts
from tests.integration.documented.shown import (
    DEFAULT_GROUPINGS,
    Scenario,
    read_table,
    report_blocks,
    text_rows,
)

pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.timeout(600)]

MESSAGES = 2000
SIZE = {"DKG_DATASET__MESSAGES": str(MESSAGES), "DKG_RUN__QUALITY_GATES": "false"}
LAYER_TABLES = ("bronze/raw_events", "silver/routed", "silver/worker_windows", "gold/key_counts",
                "gold/worker_load", "gold/distribution_metrics", "gold/runs")  # fmt: skip

RUN = ".venv/bin/dkg run --warehouse s3://lake/dkg"
SQL = '.venv/bin/dkg sql "SELECT * FROM gold.run_comparison" --warehouse s3://lake/dkg'
COMMANDS = (RUN, SQL)
CHECK = "dkg check --warehouse s3://lake/dkg --run-id RUN"
REPORT = "dkg report --warehouse s3://lake/dkg --output report.html"


@pytest.fixture(scope="module")
def in_bucket(spark, s3_options, s3_bucket, tmp_path_factory) -> Scenario:
    folder = tmp_path_factory.mktemp("s3")
    env = {
        **s3_options,
        **SIZE,
        "DKG_KAFKA__EMBEDDED__RUN_DIR": str(tmp_path_factory.mktemp("kafka")),
    }
    scenario = Scenario(folder, env, {"bucket": s3_bucket})
    if scenario.run(RUN).code == 0:
        runs = read_table(f"s3://{s3_bucket}/dkg/gold/runs", s3_options).set_index("label")
        scenario.names["run"] = runs.at["DYNAMIC_KEY", "run_id"]
        for command in (SQL, CHECK, REPORT):
            scenario.run(command)
    return scenario


def _objects(fs: pafs.S3FileSystem, prefix: str) -> list[str]:
    infos = fs.get_file_info(pafs.FileSelector(prefix, recursive=True, allow_not_found=True))
    return [i.path for i in infos if i.type == pafs.FileType.File]


def _nothing_local_but_state(folder) -> None:
    # Tables go to the bucket only: no folder named after the URI ("s3:") and no
    # table file anywhere here; .dkg holds the state folder (checkpoints, catalog).
    assert {p.name for p in folder.iterdir()} <= {".dkg", "conf", "report.html"}
    assert not [p for p in folder.rglob("*") if p.suffix == ".parquet" or p.name == "_delta_log"]


def test_run_writes_every_layer_to_the_bucket_and_gold_is_exact(in_bucket, s3_fs, s3_options,
                                                                s3_bucket):  # fmt: skip
    done = in_bucket.last(RUN)
    assert done.code == 0, done
    expected = dataset_counts([dataset_spec(load_settings(env=SIZE).settings)])
    counts = gold_counts(f"s3://{s3_bucket}/dkg", s3_options)
    assert len(counts) == len(DEFAULT_GROUPINGS) and all(c == expected for c in counts.values())
    objects = _objects(s3_fs, f"{s3_bucket}/dkg")
    for table in LAYER_TABLES:
        assert f"{s3_bucket}/dkg/{table}/_delta_log/00000000000000000000.json" in objects, table
        assert any(o.startswith(f"{s3_bucket}/dkg/{table}/") and o.endswith(".parquet")
                   for o in objects), table  # fmt: skip
    # Spark's checkpoints stay in the local state folder, never in the bucket.
    assert not [o for o in objects if "/_checkpoints/" in o]
    checkpoints = in_bucket.folder / ".dkg" / "state" / "s3" / s3_bucket / "dkg" / "_checkpoints"
    assert len(list(checkpoints.iterdir())) >= 3
    _nothing_local_but_state(in_bucket.folder)


def test_sql_reads_the_comparison_in_the_bucket(in_bucket):
    done = in_bucket.last(SQL)
    assert done.code == 0, done
    rows = text_rows(done.out)
    assert sorted(r["label"] for r in rows) == DEFAULT_GROUPINGS
    assert {int(r["tuples"]) for r in rows} == {MESSAGES}


def test_check_validates_a_run_in_the_bucket(in_bucket):
    done = in_bucket.last(CHECK)
    assert done.code == 0, done
    assert done.out.splitlines()[0] == f"run {in_bucket.names['run']}"
    assert re.search(r"\d+ suites, (\d+) expectations: \1 passed, 0 failed", done.out), done.out


def test_report_draws_the_runs_in_the_bucket(in_bucket, s3_options, s3_bucket):
    done = in_bucket.last(REPORT)
    assert done.code == 0, done
    blocks = report_blocks(in_bucket.folder / "report.html")
    runs = read_table(f"s3://{s3_bucket}/dkg/gold/runs", s3_options)
    assert sorted((r["run_id"], r["tuples"]) for r in blocks["summary"]) == sorted(
        (run_id, MESSAGES) for run_id in runs["run_id"]
    )
    assert [sum(r["tuples"]) for r in blocks["worker_load"]] == [MESSAGES] * len(runs)
    _nothing_local_but_state(in_bucket.folder)
