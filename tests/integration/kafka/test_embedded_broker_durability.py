"""The embedded broker killed with SIGKILL right after a produce loses nothing.

noida-db acknowledges messages it holds in memory and saves them about once a
second; the producer of `dkg run` returns only once the saved snapshot holds
them. Without that wait, a kill right after the flush lost every message of
100,000 and about half of 1,000,000 (measured).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from bronze.datasets.registry import make_dataset
from core.config import load_settings
from core.kafka.admin import end_offsets
from core.kafka.broker import LocalBroker
from core.runtime import Runtime
from core.tables import DeltaRsBackend
from core.warehouse import Warehouse
from pipelines.commands.simulate import dataset_spec
from pipelines.grouping_runs import ensure_topic_has
from tests.exact_counts import dataset_counts, gold_counts
from tests.integration.kafka_clients import local_client

pytestmark = pytest.mark.slow

MESSAGES = 40_000
TOPIC = "durable"


def _kill(broker: LocalBroker) -> None:
    pid = broker.status().pid
    assert pid is not None, "the embedded broker should be running after the produce"
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)  # our child: gone once reaped


# Its own deadlines: 30 s to start the broker, 120 s to save, 150 s for the job.
@pytest.mark.timeout(330)
def test_broker_killed_right_after_produce_keeps_every_message(tmp_path):
    env = {"DKG_KAFKA__EMBEDDED__RUN_DIR": str(tmp_path / "kafka"),
           "DKG_DATASET__NAME": "COUNTRY_SKEW_R80", "DKG_DATASET__MESSAGES": str(MESSAGES),
           "DKG_KAFKA__TOPICS__PARTITIONS": "3"}  # fmt: skip
    loaded = load_settings(env=env)
    spec = dataset_spec(loaded.settings)
    broker = LocalBroker(loaded.settings.kafka.embedded.run_dir)
    with Runtime(loaded) as runtime:  # as `dkg run` produces
        assert ensure_topic_has(runtime.kafka, TOPIC, make_dataset(spec), spec.messages) == MESSAGES
        produced = end_offsets(runtime.kafka, TOPIC)
        _kill(broker)  # before the runtime could stop it cleanly (which saves)
    assert sum(produced.values()) == MESSAGES

    try:
        restarted = local_client(broker.start())  # as the next command starts it
        assert end_offsets(restarted, TOPIC) == produced
        warehouse = Warehouse(tmp_path / "lakehouse")
        command = [sys.executable, "-m", "pipelines.cli", "run", "--topic", TOPIC, "--grouping", "DYNAMIC_KEY",
                   "--workers", "4", "--warehouse", str(warehouse.root)]  # fmt: skip
        finished = subprocess.run(command, env={**os.environ, **env}, capture_output=True,  # noqa: S603
                                  text=True, timeout=150, check=False)  # fmt: skip
        assert finished.returncode == 0, finished.stderr[-2000:]
    finally:
        broker.stop()

    backend = DeltaRsBackend()
    bronze = backend.read(warehouse.table_uri("bronze", "raw_events")).to_pandas()
    assert len(bronze) == MESSAGES
    assert not bronze.duplicated(["partition", "offset"]).any()
    exact = dataset_counts([spec])
    assert list(gold_counts(warehouse.root).values()) == [exact]
    metrics = backend.read(warehouse.table_uri("gold", "distribution_metrics")).to_pandas()
    assert metrics.loc[metrics["scope"] == "cumulative", "tuples"].tolist() == [sum(exact.values())]
