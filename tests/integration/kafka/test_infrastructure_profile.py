"""The infrastructure profile: the main job on infrastructure of its own, as a user runs it.

A Kafka-protocol broker started separately (the user's own), a Spark standalone
master with two workers, the warehouse in S3-compatible storage (a moto server)
and the default grouping (every grouping's rule is checked tuple for tuple in
tests/integration/test_jobs_finite_run.py). The driver is killed with SIGKILL
mid-run and the same command resumes it; gold is exact, and Spark's event logs
show that every task ran on the executors.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pyarrow.fs as pafs
import pytest
import yaml
from deltalake import DeltaTable

from bench.standalone import StandaloneCluster
from bronze.datasets.base import DatasetSpec
from core.spark.class_archive import archive_options
from tests.exact_counts import dataset_counts, gold_counts

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[3]
SOURCE, MESSAGES = "ZIPF", 6_000  # three micro-batches of 2,000


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with StandaloneCluster(tmp_path_factory.mktemp("standalone")) as standalone:
        yield standalone.url


def _environment(s3_options: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    return {**env, **s3_options, "PYTHONPATH": str(REPO), "PYTHONUNBUFFERED": "1"}


def _wait_for(what: str, done, process: subprocess.Popen, timeout_s: float, log: Path) -> None:
    deadline = time.monotonic() + timeout_s
    while not done():
        if process.poll() is not None:
            pytest.fail(f"the job ended (exit {process.returncode}) before {what}: "
                        f"{log.read_text(errors='replace')[-3000:]}")  # fmt: skip
        if time.monotonic() > deadline:
            pytest.fail(f"no {what} within {timeout_s:.0f} s: {log.read_text(errors='replace')[-3000:]}")
        time.sleep(0.2)


def _task_executors(events: Path) -> Counter:
    """Executor id of every finished task in Spark's event logs."""
    executors: Counter = Counter()
    for log in (path for path in events.rglob("*") if path.is_file()):
        for line in log.read_text(errors="replace").splitlines():
            if '"SparkListenerTaskEnd"' in line:
                executors[json.loads(line)["Task Info"]["Executor ID"]] += 1
    return executors


# ~110 s alone; its own deadlines: 60 s for the cluster, 420 s to the kill point, 30 s for
# the kill, 600 s for the resume.
@pytest.mark.timeout(1200)
def test_killed_driver_resumes_on_a_cluster_with_the_warehouse_in_object_storage(
        cluster, bootstrap, s3_options, s3_fs, s3_bucket, tmp_path):  # fmt: skip
    warehouse, events = f"s3://{s3_bucket}/infra", tmp_path / "events"
    events.mkdir()
    config = tmp_path / "cluster.yaml"
    config.write_text(yaml.safe_dump({
        "spark": {"conf": {"spark.eventLog.enabled": "true", "spark.eventLog.dir": events.as_uri(),
                            "spark.eventLog.compress": "false",
                            # A few micro-batches each: start-up dominates, the quick compiler
                            # pays, and so does the class archive the daemons map too.
                            "spark.executor.extraJavaOptions":
                                f"-XX:TieredStopAtLevel=1 {archive_options()}".strip()}},
        # Checkpoints and state stores: a folder the executors share (this machine's).
        "warehouse": {"state_dir": str(tmp_path / "state")},
    }))  # fmt: skip
    command = [sys.executable, "-m", "pipelines.cli", "run", "--mode", "CLUSTER", "--master", cluster,
               "--bootstrap-servers", bootstrap, "--profile", "local", "--topic", "infra",
               "--dataset", SOURCE, "--messages", str(MESSAGES), "--workers", "4",
               "--partitions", "2", "--grouping", "DYNAMIC_KEY",
               "--max-offsets-per-trigger", "2000", "--warehouse", warehouse,
               "--config", str(config)]  # fmt: skip
    env, log = _environment(s3_options), tmp_path / "first.log"
    with open(log, "wb") as out:
        first = subprocess.Popen(command, cwd=tmp_path, env=env, stdout=out,  # noqa: S603
                                 stderr=subprocess.STDOUT, start_new_session=True)  # fmt: skip
    try:
        # Mid-run: silver has committed a batch of routed tuples in the bucket.
        routed_commit = f"{s3_bucket}/infra/silver/routed/_delta_log/{1:020d}.json"
        _wait_for("silver commit", lambda: s3_fs.get_file_info(routed_commit).type
                  == pafs.FileType.File, first, 420, log)  # fmt: skip
        assert first.poll() is None  # the kill hits a running job
        os.killpg(first.pid, signal.SIGKILL)
        assert first.wait(timeout=30) == -signal.SIGKILL
    finally:
        if first.poll() is None:
            os.killpg(first.pid, signal.SIGKILL)

    resumed = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True,  # noqa: S603
                             timeout=600, check=False)  # fmt: skip
    assert resumed.returncode == 0, resumed.stderr[-3000:]

    options = {**s3_options}
    runs = DeltaTable(f"{warehouse}/gold/runs", storage_options=options).to_pandas()
    assert runs["label"].tolist() == ["DYNAMIC_KEY"]
    assert set(runs["status"]) == {"succeeded"}
    metrics = DeltaTable(f"{warehouse}/gold/distribution_metrics", storage_options=options).to_pandas()
    exact = dataset_counts([DatasetSpec(name=SOURCE, messages=MESSAGES)])
    assert gold_counts(warehouse, options) == dict.fromkeys(runs["run_id"], exact)
    for run_id in runs["run_id"]:
        cumulative = metrics[(metrics["run_id"] == run_id) & (metrics["scope"] == "cumulative")]
        assert cumulative["tuples"].tolist() == [sum(exact.values())], run_id

    executors = _task_executors(events)
    assert executors and "driver" not in executors, executors
    assert len(executors) >= 2, executors  # both workers' executors ran tasks
