"""Without `dkg kafka up`, a command starts the embedded broker and stops it after.

That the broker `dkg kafka up` starts is the one the other commands use, and leave
running, is tests/integration/documented/test_shown_embedded_broker.py.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from core.kafka.admin import end_offsets
from core.kafka.broker import LocalBroker
from pipelines.cli import main
from tests.integration.kafka_clients import local_client

pytestmark = pytest.mark.slow


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
