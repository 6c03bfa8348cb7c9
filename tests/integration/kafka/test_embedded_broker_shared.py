"""`dkg kafka up` starts the broker that the other commands then use, and leave running."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from core.kafka.admin import end_offsets
from core.kafka.broker import LocalBroker
from pipelines.cli import main
from tests.integration.kafka_clients import local_client

pytestmark = pytest.mark.slow


def test_commands_use_the_broker_that_kafka_up_started(capsys):
    run_dir = Path(os.environ["DKG_KAFKA__EMBEDDED__RUN_DIR"])  # set for every test
    broker = LocalBroker(run_dir)
    assert main(["kafka", "up"]) == 0
    try:
        started = broker.status()
        assert started.running
        assert main(["produce", "--topic", "shared", "--messages", "300", "--partitions", "2"]) == 0
        assert f"at {started.bootstrap}" in capsys.readouterr().out
        # Still the same broker, still up: a command stops only a broker it started.
        assert broker.status() == started
        offsets = end_offsets(local_client(started.bootstrap), "shared")
        assert len(offsets) == 2 and sum(offsets.values()) == 300
    finally:
        assert main(["kafka", "down"]) == 0
    assert not broker.status().running


def test_a_command_starts_the_embedded_broker_when_none_runs_and_stops_it_after(capsys):
    broker = LocalBroker(Path(os.environ["DKG_KAFKA__EMBEDDED__RUN_DIR"]))
    assert not broker.status().running
    assert main(["produce", "--topic", "own", "--messages", "50"]) == 0
    assert "produced 50" in capsys.readouterr().out
    assert not broker.status().running
    bootstrap = broker.start()  # its data stayed in the run folder
    try:
        assert sum(end_offsets(local_client(bootstrap), "own").values()) == 50
    finally:
        broker.stop()
