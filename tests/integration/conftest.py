"""Shared integration fixtures: the one SparkSession of a test run, and a real S3-compatible server."""

from __future__ import annotations

import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator

import pyarrow.fs as pafs
import pytest
from pyspark.sql import SparkSession

from core.kafka.broker import free_port
from core.spark.session import build_spark
from pipelines.pipeline_runtime import WORKER_DAEMON


@pytest.fixture(scope="session")
def spark() -> Iterator[SparkSession]:
    """local[2], 2 shuffle partitions, UI off; ~8 s to start, so once per run."""
    session = build_spark(app_name="dkg-tests", master="local[2]", driver_memory="2g",
                          shuffle_partitions=2, ui=False, python_daemon=WORKER_DAEMON)  # fmt: skip
    yield session
    session.stop()


BUCKET = "dkg-tests"
_START_TIMEOUT_S = 30.0


def _answers(endpoint: str) -> bool:
    try:
        with urllib.request.urlopen(endpoint, timeout=1) as response:  # noqa: S310 - loopback http
            return response.status == 200
    except (OSError, urllib.error.URLError):
        return False


@pytest.fixture(scope="session")
def s3_endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``http://127.0.0.1:PORT`` of a moto_server process, stopped at the end of the run."""
    port = free_port()
    endpoint = f"http://127.0.0.1:{port}"
    log_path = tmp_path_factory.mktemp("moto") / "moto.log"
    with open(log_path, "wb") as log:
        process = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1",  # noqa: S603
                                    "-p", str(port)], stdout=log, stderr=subprocess.STDOUT)  # fmt: skip
    try:
        deadline = time.monotonic() + _START_TIMEOUT_S
        while not _answers(endpoint):
            if process.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"moto_server did not answer HTTP on {endpoint} within "
                            f"{_START_TIMEOUT_S:.0f} s (exit code {process.poll()}); log: "
                            f"{log_path.read_text(errors='replace')[-2000:]}")  # fmt: skip
            time.sleep(0.2)
        yield endpoint
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


@pytest.fixture(scope="session")
def s3_options(s3_endpoint: str) -> dict[str, str]:
    """The standard AWS_* settings that reach the server (dummy keys; moto checks none)."""
    return {"AWS_ENDPOINT_URL": s3_endpoint, "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing", "AWS_REGION": "us-east-1",
            "AWS_ALLOW_HTTP": "true"}  # fmt: skip


@pytest.fixture(scope="session")
def s3_fs(s3_options: dict[str, str]) -> pafs.S3FileSystem:
    """pyarrow's own S3 client of the server, independent of the project's Storage."""
    return pafs.S3FileSystem(access_key=s3_options["AWS_ACCESS_KEY_ID"],
                             secret_key=s3_options["AWS_SECRET_ACCESS_KEY"],
                             endpoint_override=s3_options["AWS_ENDPOINT_URL"], scheme="http",
                             region=s3_options["AWS_REGION"], allow_bucket_creation=True)  # fmt: skip


@pytest.fixture(scope="session")
def s3_bucket(s3_fs: pafs.S3FileSystem) -> str:
    """An empty bucket on the server."""
    s3_fs.create_dir(BUCKET)
    return BUCKET
