"""Writes one phase of generated join data into the left and right Kafka topics.

Each record goes to the partition the generator chose (the same id lands in the
same partition number on both topics) with its creation time as the Kafka
timestamp. The value is JSON: ``{"id": ..., "created_ms": ...}``, or
``{"heartbeat": true, "created_ms": ...}`` for the closing heartbeats.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable

import pandas as pd

from core.kafka.admin import BrokerError, check_reachable, ensure_topic
from core.kafka.client import KafkaClient
from core.kafka.producer import DeliveryErrors, confirm_saved, held_before, open_producer, send
from core.logs import RESULT

__all__ = ["encode_value", "produce_phase"]

logger = logging.getLogger(__name__)


def encode_value(record_id: str | None, created_ms: int) -> bytes:
    """The message value of a record (a heartbeat when ``record_id`` is None)."""
    if record_id is None:
        return json.dumps({"heartbeat": True, "created_ms": created_ms}).encode()
    return json.dumps({"id": record_id, "created_ms": created_ms}).encode()


def produce_phase(records: pd.DataFrame, client: KafkaClient, topics: tuple[str, str], partitions: int,
                  progress: Callable[[int], None] | None = None) -> int:  # fmt: skip
    """Send ``records`` (generator rows) to ``topics`` = (left, right); returns the count.

    Raises:
        BrokerError: Kafka is unreachable or refuses the messages.
    """
    from confluent_kafka import KafkaException

    started = time.monotonic()
    check_reachable(client.bootstrap)
    for topic in topics:
        ensure_topic(client, topic, partitions)
    before = held_before(client, topics)
    failures = DeliveryErrors()
    producer = open_producer(client, "dkg-join-producer", failures)
    sent = 0
    try:
        rows = zip(records["side"].tolist(), records["partition"].tolist(), records["id"].tolist(),
                   records["created_ms"].tolist(), strict=True)  # fmt: skip
        for side, partition, record_id, created in rows:
            key = None if record_id is None else record_id.encode()
            send(producer, topics[side], key, encode_value(record_id, int(created)), int(created),
                 partition=int(partition))  # fmt: skip
            sent += 1
            if sent % 10_000 == 0:
                producer.poll(0)
                if failures.first:
                    raise BrokerError(f"producing to {topics} at {client.bootstrap} failed: {failures.first}")
                if progress is not None:
                    progress(sent)
        if producer.flush(60.0):
            raise BrokerError(f"producing to {topics} at {client.bootstrap}: messages still unsent after 60 s")
    except KafkaException as exc:
        raise BrokerError(f"producing to {topics} at {client.bootstrap} failed: {exc}") from None
    if failures.first:
        raise BrokerError(f"producing to {topics} at {client.bootstrap} failed: {failures.first}")
    confirm_saved(client, topics, before, sent)
    if progress is not None:
        progress(sent)
    logger.info("produced %s join records to %s and %s in %.1f s", f"{sent:,}", *topics,
                time.monotonic() - started, extra=RESULT)  # fmt: skip
    return sent
