"""The embedded broker named by its address is still the embedded broker: the local profile applies.

The broker's state file is the one ``LocalBroker`` writes; the pid is this test's own
process, so the broker counts as running without starting one (the settings alone are
under test; tests/integration/kafka/test_generated_data_on_a_named_kafka.py runs the
real broker).
"""

from __future__ import annotations

import argparse
import json
import os

import pytest

from pipelines.commands.common import load_from_args


def _args(tmp_path, servers: str) -> argparse.Namespace:
    return argparse.Namespace(settings=[f"kafka.embedded.run_dir={tmp_path}"], config=[],
                              profile=None, bootstrap_servers=servers)  # fmt: skip


@pytest.fixture
def running(tmp_path):
    (tmp_path / "broker.json").write_text(json.dumps({"pid": os.getpid(), "port": 41234,
                                                       "data_dir": str(tmp_path / "data")}))  # fmt: skip
    return tmp_path


@pytest.mark.parametrize("servers", ["127.0.0.1:41234", "localhost:41234",
                                     "kafka:9092,127.0.0.1:41234"])  # fmt: skip
def test_its_address_brings_the_local_profile(running, servers):
    loaded = load_from_args(_args(running, servers), {"bootstrap_servers": "kafka.bootstrap_servers"})
    assert loaded.profile == "local"
    assert loaded.settings.kafka.bootstrap_servers == servers  # still reached as named
    assert loaded.settings.kafka.topics.replication_factor == 1  # the local profile's


@pytest.mark.parametrize("servers", ["127.0.0.1:41235", "kafka:41234", "10.0.0.7:41234"])
def test_another_kafka_keeps_no_profile(running, servers):
    loaded = load_from_args(_args(running, servers), {"bootstrap_servers": "kafka.bootstrap_servers"})
    assert loaded.profile is None
    assert loaded.settings.kafka.topics.replication_factor is None


def test_generated_topics_keep_their_messages_on_any_kafka(tmp_path):
    loaded = load_from_args(_args(tmp_path, "kafka:9092"), {"bootstrap_servers": "kafka.bootstrap_servers"})
    assert loaded.profile is None
    assert loaded.settings.kafka.topics.config == {"retention.ms": "-1", "retention.bytes": "-1"}
