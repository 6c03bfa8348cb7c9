"""Writes one phase of generated join data into the left and right Kafka topics.

Each record goes to the partition the generator chose (the same id lands in the
same partition number on both topics) with its creation time as the Kafka
timestamp. The value is JSON: ``{"id": ..., "created_ms": ...}``, or
``{"heartbeat": true, "created_ms": ...}`` for the closing heartbeats.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable

import pandas as pd

from pipelines.core.broker import BrokerError, check_reachable, ensure_topic

__all__ = ["encode_value", "produce_phase"]

logger = logging.getLogger(__name__)


def encode_value(record_id: str | None, created_ms: int) -> bytes:
    """The message value of a record (a heartbeat when ``record_id`` is None)."""
    if record_id is None:
        return json.dumps({"heartbeat": True, "created_ms": created_ms}).encode()
    return json.dumps({"id": record_id, "created_ms": created_ms}).encode()


def produce_phase(records: pd.DataFrame, bootstrap: str, topics: tuple[str, str], partitions: int,
                  progress: Callable[[int], None] | None = None) -> int:  # fmt: skip
    """Send ``records`` (generator rows) to ``topics`` = (left, right); returns the count.

    Raises:
        BrokerError: Kafka is unreachable or refuses the messages.
    """
    from kafka import KafkaProducer
    from kafka.errors import KafkaError

    check_reachable(bootstrap)
    for topic in topics:
        ensure_topic(bootstrap, topic, partitions)
    producer = KafkaProducer(bootstrap_servers=bootstrap, linger_ms=20, batch_size=1 << 20,
                             max_request_size=16 << 20, acks=1, client_id="dkg-join-producer")  # fmt: skip
    sent = 0
    try:
        rows = zip(records["side"].tolist(), records["partition"].tolist(), records["id"].tolist(),
                   records["created_ms"].tolist(), strict=True)  # fmt: skip
        for side, partition, record_id, created in rows:
            key = None if record_id is None else record_id.encode()
            producer.send(topics[side], key=key, value=encode_value(record_id, int(created)),
                          partition=int(partition), timestamp_ms=int(created))  # fmt: skip
            sent += 1
            if progress is not None and sent % 10_000 == 0:
                progress(sent)
        producer.flush()
    except KafkaError as exc:
        raise BrokerError(f"producing to {topics} at {bootstrap} failed: {exc}") from None
    finally:
        producer.close()
    if progress is not None:
        progress(sent)
    logger.info("produced %d join records to %s", sent, topics)
    return sent
