"""A `dkg run` killed with SIGKILL and started again ends with exact gold counts."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter

import pytest

from bronze.datasets.base import DatasetSpec
from bronze.datasets.registry import make_dataset
from core.tables import DeltaRsBackend
from core.warehouse import Warehouse
from tests.integration.waiting import wait_for_version

pytestmark = pytest.mark.slow

MESSAGES = 6000
SOURCE = "COUNTRY_SKEW_R80"


def _command(bootstrap: str, topic: str, warehouse: str) -> list[str]:
    # The test broker is the embedded kind: its profile's settings apply.
    return [sys.executable, "-m", "pipelines.cli", "run", "--bootstrap-servers", bootstrap,
            "--profile", "local",
            "--topic", topic, "--source", SOURCE, "--messages", str(MESSAGES), "--workers", "4",
            "--partitions", "3", "--max-offsets-per-trigger", "700", "--warehouse", str(warehouse)]  # fmt: skip


def _exact_counts() -> Counter:
    exact: Counter = Counter()
    spec = DatasetSpec(name=SOURCE, messages=MESSAGES)
    for batch in make_dataset(spec).tuples(batch_size=MESSAGES):
        exact.update(dict(Counter(batch.keys.tolist())))
    return exact


# Its own deadlines: 120 s to the kill point, 60 s for the kill, 600 s for the resume.
@pytest.mark.timeout(900)
@pytest.mark.parametrize(("table", "version", "delay_s"), [
    (("bronze", "raw_events"), 1, 0.0),   # right after a commit: between batches
    (("bronze", "raw_events"), 1, 0.3),   # while the next batch's tasks land files
    (("silver", "routed"), 0, 0.3),       # while the next silver batch is in flight
])  # fmt: skip
def test_killed_run_resumes_without_loss_or_double_count(bootstrap, tmp_path, table, version,
                                                         delay_s):  # fmt: skip
    warehouse = Warehouse(tmp_path / "lakehouse")
    topic = f"kill-{table[1]}-{version}"
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    first = subprocess.Popen(_command(bootstrap, topic, warehouse.root), env=env,  # noqa: S603
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        wait_for_version(warehouse.table_uri(*table), version)
        time.sleep(delay_s)
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=60)  # SIGKILL cannot be refused: a minute is ample
    finished = subprocess.run(_command(bootstrap, topic, warehouse.root), env=env,  # noqa: S603
                              capture_output=True, text=True, timeout=600, check=False)  # fmt: skip
    assert finished.returncode == 0, finished.stderr[-2000:]

    backend = DeltaRsBackend()
    bronze = backend.read(warehouse.table_uri("bronze", "raw_events")).to_pandas()
    assert len(bronze) == MESSAGES
    assert not bronze.duplicated(["partition", "offset"]).any()
    counts = backend.read(warehouse.table_uri("gold", "key_counts")).to_pandas()
    assert counts.groupby("key")["count"].sum().to_dict() == dict(_exact_counts())
