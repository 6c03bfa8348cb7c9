"""A real local Kafka-protocol broker for the run (noida-db on a free loopback port)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from core.kafka.broker import LocalBroker
from core.kafka.client import KafkaClient
from tests.integration.kafka_clients import local_client


@pytest.fixture(scope="session")
def kafka_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalBroker]:
    broker = LocalBroker(tmp_path_factory.mktemp("kafka"))
    broker.start()
    yield broker
    broker.stop()


@pytest.fixture(scope="session")
def bootstrap(kafka_broker: LocalBroker) -> str:
    status = kafka_broker.status()
    assert status.bootstrap is not None
    return status.bootstrap


@pytest.fixture(scope="session")
def kafka(bootstrap: str) -> KafkaClient:
    return local_client(bootstrap)
