"""The `dkg` commands on a warehouse in S3-compatible object storage (a real moto server).

Each command runs as a user runs it, a `python -m pipelines.cli` process with the
storage settings in its environment or its config, from a working directory of
its own; the tests read what landed in the bucket with delta-rs and pyarrow
directly and compare it with the generators' own data. The pages' own `dkg run`
and `dkg sql` on a bucket, with a check and a report of that warehouse, are in
tests/integration/documented/test_shown_s3.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import DeltaTable

from bronze.datasets.base import DatasetSpec
from bronze.join_data.generator import generate
from core.config import load_settings
from core.kafka.broker import free_port
from core.tables import DeltaRsBackend
from pipelines.cli import main
from pipelines.join_pipeline import data_spec
from tests.exact_counts import dataset_counts, gold_counts

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[3]
SOURCE = "COUNTRY_SKEW_R80"


def _environment(settings: dict[str, str]) -> dict[str, str]:
    # No AWS_* variable of the machine leaks in: only what the test gives reaches the store.
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    return {**env, **settings, "PYTHONPATH": str(REPO), "PYTHONUNBUFFERED": "1"}


def _dkg(cwd: Path, settings: dict[str, str], *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pipelines.cli", *argv], cwd=cwd,  # noqa: S603
                          env=_environment(settings), capture_output=True, text=True,
                          timeout=300, check=False)  # fmt: skip


def _table(uri: str, options: dict[str, str]) -> pa.Table:
    return DeltaTable(uri, storage_options=options).to_pyarrow_table()


def _nothing_local_but_state(cwd: Path) -> None:
    # Tables go to the bucket only: no folder named after the URI ("s3:") and no
    # table file anywhere here; .dkg holds the state folder (checkpoints, catalog).
    assert {p.name for p in cwd.iterdir()} <= {".dkg", "s3.yaml"}
    assert not [p for p in cwd.rglob("*") if p.suffix == ".parquet" or p.name == "_delta_log"]


@pytest.fixture(scope="module")
def cwd(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("cwd")


def test_join_takes_the_storage_settings_from_the_config(cwd, s3_options, s3_bucket):
    # Endpoint, region and key id from a --config file, the secret key from --set
    # (YAML refuses secrets), and no AWS_* variable in the environment.
    overlay = cwd / "s3.yaml"
    public = {k: v for k, v in s3_options.items() if k != "AWS_SECRET_ACCESS_KEY"}
    overlay.write_text("warehouse:\n  storage_options:\n"
                       + "".join(f"    {k}: '{v}'\n" for k, v in public.items()))  # fmt: skip
    warehouse = f"s3://{s3_bucket}/join"
    done = _dkg(cwd, {}, "join", "--warehouse", warehouse, "--lefts", "1000", "--partitions", "2",
                "--config", str(overlay), "--set",
                f"warehouse.storage_options.AWS_SECRET_ACCESS_KEY={s3_options['AWS_SECRET_ACCESS_KEY']}")  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    truth = generate(data_spec(load_settings(env={}).settings.join, lefts=1000, partitions=2)).matches
    joined = _table(f"{warehouse}/silver/joined", s3_options).to_pandas()
    joined = joined.drop_duplicates(["id", "record"])  # a replayed batch may repeat rows
    assert joined["id"].is_unique and len(joined) == 1000  # every left, matched or not
    matched = joined[joined["record"] == "matched"]
    assert dict(zip(matched["id"], matched["right_created_ms"], strict=True)) == truth
    (stats,) = [r for r in _table(f"{warehouse}/gold/join_stats", s3_options).to_pylist()
                if r["scope"] == "cumulative"]  # fmt: skip
    assert (stats["lefts"], stats["matched"]) == (1000, len(truth))
    _nothing_local_but_state(cwd)


def test_job_spec_runs_its_tasks_against_the_bucket(cwd, s3_options, s3_bucket):
    warehouse = f"s3://{s3_bucket}/job"
    params = [f"--param={p}" for p in (f"dataset={SOURCE}", "messages=1000", "rate=2000",
                                       "topic=s3-job", "partitions=2", "workers=4", "grouping=KEY")]  # fmt: skip
    done = _dkg(cwd, s3_options, "job", "run", str(REPO / "conf" / "jobs" / "lakehouse.yml"),
                "--warehouse", warehouse, *params)  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:]
    runs = cwd / ".dkg" / "state" / "s3" / s3_bucket / "job" / "_jobs" / "lakehouse"
    (record_path,) = runs.glob("*.json")
    record = json.loads(record_path.read_text())
    assert [(k, t["status"]) for k, t in record["tasks"].items()] == [
        ("produce", "succeeded"), ("run", "succeeded"), ("summary", "succeeded")]
    assert "KEY" in Path(record["tasks"]["summary"]["log"]).read_text()
    expected = dataset_counts([DatasetSpec(name=SOURCE, messages=1000, rate=2000)])
    assert list(gold_counts(warehouse, s3_options).values()) == [expected]  # grouping=KEY: one run
    _nothing_local_but_state(cwd)


@pytest.mark.timeout(900)  # two `dkg run` processes of up to 300 s each
def test_a_run_started_again_on_an_emptied_bucket_lands_its_messages_again(
        s3_options, s3_fs, s3_bucket, tmp_path):  # fmt: skip
    # Checkpoints stay in the local state folder while the bucket is emptied (an
    # in-memory S3 server restarted): the same command started again from the same
    # folder resumed after the checkpointed offsets, landed nothing, and bronze's gate
    # failed (expect_table_row_count_to_be_between: observed 0). Gates off: gold's counts
    # show the loss too (the gate's own path: test_quality_gates, on local folders).
    warehouse = f"s3://{s3_bucket}/emptied"
    argv = ("run", "--warehouse", warehouse, "--dataset", SOURCE, "--messages", "1000",
            "--rate", "2000", "--partitions", "2", "--grouping", "KEY", "--skip-checks")  # fmt: skip
    first = _dkg(tmp_path, s3_options, *argv)
    assert first.returncode == 0, first.stderr[-3000:]
    s3_fs.delete_dir_contents(f"{s3_bucket}/emptied")
    again = _dkg(tmp_path, s3_options, *argv)
    assert again.returncode == 0, again.stderr[-3000:]
    expected = dataset_counts([DatasetSpec(name=SOURCE, messages=1000, rate=2000)])
    assert list(gold_counts(warehouse, s3_options).values()) == [expected]


def test_a_table_on_s3_without_storage_options_makes_no_local_folder(
        s3_options, s3_bucket, tmp_path, monkeypatch):  # fmt: skip
    # Credentials from the environment alone (as with an instance profile): the
    # backend has no options, yet the table must go to the bucket, not to ./s3:/...
    for name, value in s3_options.items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(tmp_path)
    uri = f"s3://{s3_bucket}/bare/table"
    assert DeltaRsBackend().create_if_missing(uri, pa.schema([("key", pa.string())]))
    assert list(tmp_path.iterdir()) == []
    assert DeltaTable(uri, storage_options=s3_options).version() == 0


@pytest.mark.parametrize(("argv", "settings", "expected"), [
    (["run", "--warehouse", "s3://{bucket}/wh"], {"AWS_ENDPOINT_URL": "http://127.0.0.1:{free}"},
     "dkg run: error: warehouse s3://{bucket}/wh is not writable: cannot connect to "
     "http://127.0.0.1:{free}"),
    (["sql", "SELECT 1", "--warehouse", "s3://{bucket}/wh"],
     {"AWS_ENDPOINT_URL": "http://127.0.0.1:{free}"},
     "dkg sql: error: warehouse s3://{bucket}/wh cannot be read: cannot connect to "
     "http://127.0.0.1:{free}"),
    (["run", "--warehouse", "s3://no-such-bucket/wh"], {},
     "dkg run: error: warehouse s3://no-such-bucket/wh is not writable: bucket 'no-such-bucket' "
     "does not exist"),
    (["check", "--warehouse", "s3://no-such-bucket/wh"], {},
     "dkg check: error: warehouse s3://no-such-bucket/wh: bucket 'no-such-bucket' does not exist"),
    (["sql", "SELECT 1", "--warehouse", "s3://{bucket}/nothing-here"], {},
     "dkg sql: error: no warehouse at s3://{bucket}/nothing-here (run `dkg run` first, or "
     "--warehouse)"),
    (["report", "--warehouse", "s3://{bucket}/wh"], {"AWS_ALLOW_HTTP": ""},
     "dkg report: error: warehouse s3://{bucket}/wh: endpoint {endpoint} is plain HTTP; set "
     "AWS_ALLOW_HTTP=true (environment or warehouse.storage_options) to allow it"),
])  # fmt: skip
def test_unreachable_storage_is_one_line(argv, settings, expected, s3_options, s3_bucket, tmp_path,
                                         monkeypatch, capsys):  # fmt: skip
    # In-process: these fail before any broker or Spark session starts.
    free = free_port()
    names = {"bucket": s3_bucket, "free": free, "endpoint": s3_options["AWS_ENDPOINT_URL"]}
    monkeypatch.chdir(tmp_path)
    for name, value in {**s3_options, **settings}.items():
        monkeypatch.setenv(name, value.format(**names))
    assert main([a.format(**names) for a in argv]) == 2
    captured = capsys.readouterr()
    assert captured.err.splitlines() == [expected.format(**names)]
    assert list(tmp_path.iterdir()) == []


def test_no_storage_settings_at_all_names_the_variables(tmp_path):
    # As a new user types it: no AWS_* variable, so AWS itself is asked (unreachable
    # here, refusing elsewhere); either way the line names what is not set.
    done = _dkg(tmp_path, {}, "run", "--warehouse", "s3://dkg-tests-no-credentials/prefix")
    assert done.returncode == 2, done.stderr[-3000:]
    (line,) = done.stderr.splitlines()
    assert line.startswith("dkg run: error: warehouse s3://dkg-tests-no-credentials/prefix is "
                           "not writable: "), line  # fmt: skip
    assert ("AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set, nor AWS_ENDPOINT_URL for an "
            "S3-compatible server (with AWS_ALLOW_HTTP=true if it is plain http) (environment or "
            "warehouse.storage_options)") in line, line  # fmt: skip
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("given", "missing"), [
    ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"),
    ("AWS_SECRET_ACCESS_KEY", "AWS_ACCESS_KEY_ID"),
])  # fmt: skip
def test_one_key_without_the_other_is_one_line(given, missing, s3_options, s3_bucket, tmp_path):
    settings = {k: v for k, v in s3_options.items() if k != missing}
    done = _dkg(tmp_path, settings, "run", "--warehouse", f"s3://{s3_bucket}/half")
    assert done.returncode == 2, done.stderr[-3000:]
    assert done.stderr.splitlines() == [
        f"dkg run: error: warehouse s3://{s3_bucket}/half: {given} is set but not {missing} "
        "(environment or warehouse.storage_options)"]
