"""A real local Kafka-protocol broker for the join tests (noida-db on a free loopback port)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from core.kafka.broker import LocalBroker
from core.kafka.client import KafkaClient
from tests.integration.kafka_clients import local_client


@pytest.fixture(scope="module")
def join_bootstrap(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    broker = LocalBroker(tmp_path_factory.mktemp("join-kafka"))
    bootstrap = broker.start()
    yield bootstrap
    broker.stop()


@pytest.fixture(scope="module")
def join_kafka(join_bootstrap: str) -> KafkaClient:
    return local_client(join_bootstrap)
