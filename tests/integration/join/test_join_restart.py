"""`dkg join` killed with SIGKILL mid-run and started again loses no match."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from core.config import load_settings
from core.tables import DeltaRsBackend
from core.warehouse import Warehouse
from pipelines.join_pipeline import (
    JoinRequest,
    data_spec,
    generated_topics,
    ground_truth_check,
    join_run_id,
)
from silver.join import JoinParams
from tests.integration.waiting import wait_for_version

pytestmark = [pytest.mark.spark, pytest.mark.slow]

LEFTS = 4_000


def _command(bootstrap: str, warehouse: str, overlay: Path) -> list[str]:
    return [sys.executable, "-m", "pipelines.cli", "join", "--bootstrap-servers", bootstrap,
            "--profile", "local", "--lefts", str(LEFTS), "--partitions", "2",
            "--warehouse", str(warehouse), "--config", str(overlay)]  # fmt: skip


# Its own deadlines: 300 s to the kill point, 60 s for the kill, 900 s for the resume.
@pytest.mark.timeout(1320)
def test_killed_join_resumes_without_losing_a_match(join_bootstrap, join_kafka, tmp_path):
    warehouse = Warehouse(tmp_path / "lakehouse")
    overlay = tmp_path / "small-batches.yaml"
    overlay.write_text("join:\n  max_offsets_per_trigger: 1200\n")  # several micro-batches
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    first = subprocess.Popen(_command(join_bootstrap, warehouse.root, overlay), env=env,  # noqa: S603
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        wait_for_version(warehouse.table_uri("silver", "joined"), 1, timeout_s=300)
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=60)  # SIGKILL cannot be refused: a minute is ample
    finished = subprocess.run(_command(join_bootstrap, warehouse.root, overlay), env=env,  # noqa: S603
                              capture_output=True, text=True, timeout=900, check=False)  # fmt: skip
    assert finished.returncode == 0, finished.stderr[-2000:]
    assert "false_unmatched" in finished.stdout

    spec = data_spec(load_settings(env={}).settings.join, lefts=LEFTS, partitions=2)
    request = JoinRequest(spec, generated_topics(spec), join_kafka, JoinParams(), shards=2)
    run_id = join_run_id(request)
    backend = DeltaRsBackend()
    assert ground_truth_check(backend, warehouse, run_id, spec) == {
        "missed": 0, "false_unmatched": 0, "wrong_pairs": 0}
    state = backend.read(warehouse.table_uri("silver", "join_state")).to_pandas()
    assert state["batch_id"].nunique() >= 3  # the kill really came mid-run
