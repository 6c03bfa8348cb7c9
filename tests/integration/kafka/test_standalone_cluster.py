"""The main job on a Spark standalone cluster: a master and two workers started locally."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pyspark
import pytest

from bronze.datasets.base import DatasetSpec
from bronze.datasets.registry import make_dataset
from core.kafka.broker import free_port
from core.tables import DeltaRsBackend
from core.warehouse import Warehouse

pytestmark = pytest.mark.slow


def _spark_class(args: list[str], log: Path, env: dict[str, str]) -> subprocess.Popen:
    spark_home = Path(pyspark.__file__).parent
    with open(log, "wb") as out:
        return subprocess.Popen([str(spark_home / "bin" / "spark-class"), *args], env=env,  # noqa: S603
                                stdout=out, stderr=subprocess.STDOUT, start_new_session=True)  # fmt: skip


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    home = tmp_path_factory.mktemp("standalone")
    env = {**os.environ, "SPARK_HOME": str(Path(pyspark.__file__).parent),
           "PYSPARK_PYTHON": sys.executable, "SPARK_LOCAL_IP": "127.0.0.1"}  # fmt: skip
    port = free_port()
    url = f"spark://127.0.0.1:{port}"
    processes = [_spark_class(["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                               "--port", str(port), "--webui-port", str(free_port())],
                              home / "master.log", env)]  # fmt: skip
    for worker in range(2):
        processes.append(_spark_class(
            ["org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1", "--cores", "1",
             "--memory", "2g", "--webui-port", str(free_port()), "--work-dir",
             str(home / f"work{worker}"), url], home / f"worker{worker}.log", env))  # fmt: skip
    deadline = time.monotonic() + 60
    master_log = home / "master.log"
    while time.monotonic() < deadline:
        if master_log.exists() and master_log.read_text(errors="replace").count("Registering worker") >= 2:
            break
        time.sleep(0.5)
    else:
        pytest.fail(f"standalone cluster did not come up: {master_log.read_text(errors='replace')[-2000:]}")
    yield url
    for process in processes:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=30)


def test_main_job_runs_on_a_standalone_cluster(cluster, bootstrap, tmp_path):
    warehouse = Warehouse(tmp_path / "lakehouse")
    command = [sys.executable, "-m", "pipelines.cli", "run", "--mode", "CLUSTER", "--master", cluster,
               "--bootstrap-servers", bootstrap, "--profile", "local", "--topic", "cluster-run",
               "--source",
               "COUNTRY_SKEW_R80", "--messages", "3000", "--workers", "4", "--partitions", "2",
               "--warehouse", str(warehouse.root)]  # fmt: skip
    finished = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)  # noqa: S603
    assert finished.returncode == 0, finished.stderr[-3000:]
    assert "DYNAMIC_KEY" in finished.stdout
    exact: Counter = Counter()
    for batch in make_dataset(DatasetSpec(name="COUNTRY_SKEW_R80", messages=3000)).tuples():
        exact.update(batch.keys.tolist())
    counts = DeltaRsBackend().read(warehouse.table_uri("gold", "key_counts")).to_pandas()
    assert counts.groupby("key")["count"].sum().to_dict() == dict(exact)
