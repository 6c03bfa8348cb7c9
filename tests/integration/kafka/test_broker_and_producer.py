"""The local broker, topics and the producer, against a real broker."""

from __future__ import annotations

import time

import pytest
from kafka import KafkaConsumer, TopicPartition

from bronze.datasets.base import DatasetSpec
from bronze.datasets.registry import make_dataset
from bronze.producer import produce
from core.kafka.admin import BrokerError, end_offsets, ensure_topic, topic_exists
from core.kafka.broker import LocalBroker
from tests.integration.kafka_clients import local_client

pytestmark = pytest.mark.slow


def test_status_and_topics(kafka_broker, kafka):
    assert kafka_broker.status().running
    assert ensure_topic(kafka, "three", 3)
    assert not ensure_topic(kafka, "three", 3)  # idempotent
    assert topic_exists(kafka, "three")
    assert end_offsets(kafka, "three") == {0: 0, 1: 0, 2: 0}
    with pytest.raises(BrokerError, match="does not exist"):
        end_offsets(kafka, "no-such-topic")


def test_producer_writes_every_message_keyed_with_event_timestamps(bootstrap, kafka):
    dataset = make_dataset(DatasetSpec(name="COUNTRY_SKEW_R80", messages=3000, seed=1))
    assert produce(dataset, kafka, "countries", 3) == 3000
    offsets = end_offsets(kafka, "countries")
    assert sum(offsets.values()) == 3000 and len(offsets) == 3
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    parts = [TopicPartition("countries", p) for p in range(3)]
    consumer.assign(parts)
    for tp in parts:
        consumer.seek(tp, 0)
    records = []
    deadline = time.monotonic() + 30
    while len(records) < 3000 and time.monotonic() < deadline:
        for batch in consumer.poll(timeout_ms=500).values():
            records.extend(batch)
    consumer.close()
    assert len(records) >= 3000, f"waited 30 s to consume 3000 records of countries; got {len(records)}"
    expected = next(make_dataset(DatasetSpec(name="COUNTRY_SKEW_R80", messages=3000, seed=1))
                    .messages(batch_size=3000))  # fmt: skip
    sent = set(zip(expected.keys, expected.payloads, expected.timestamps_ms.tolist(), strict=True))
    assert {(r.key, r.value, r.timestamp) for r in records} == sent
    by_key: dict[bytes, set[int]] = {}
    for r in records:
        by_key.setdefault(r.key, set()).add(r.partition)
    assert all(len(p) == 1 for p in by_key.values())  # a key stays in one partition


def test_restart_keeps_data(tmp_path):
    broker = LocalBroker(tmp_path)
    produce(make_dataset(DatasetSpec(messages=500)), local_client(broker.start()), "kept", 2)
    broker.stop()
    assert not broker.status().running
    kafka = local_client(broker.start())
    try:
        assert sum(end_offsets(kafka, "kept").values()) == 500
    finally:
        broker.stop()


def test_unreachable_broker_fails_fast():
    started = time.monotonic()
    with pytest.raises(BrokerError, match="cannot reach"):
        produce(make_dataset(DatasetSpec(messages=10)), local_client("127.0.0.1:1"), "t", 1)
    assert time.monotonic() - started < 10
