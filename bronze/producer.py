"""Writes a dataset's messages into a Kafka topic, keyed, at a set speed.

The Kafka timestamp of each message is its event time (or, for latency
measurements, the wall-clock time it was sent), and the key is the message's
first tuple key, so the partitioner keeps a key's order within its partition.
Messages go through librdkafka (confluent-kafka): kafka-python's per-record
Python path tops out near 25,000 messages/s, below the pipeline's ingest rate.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from bronze.datasets.base import MessageSource
from core.kafka.admin import BrokerError, check_reachable, ensure_topic
from core.kafka.client import KafkaClient
from core.kafka.producer import DeliveryErrors, confirm_saved, held_before, open_producer, send
from core.logs import RESULT

__all__ = ["produce"]

logger = logging.getLogger(__name__)


def produce(dataset: MessageSource, client: KafkaClient, topic: str, partitions: int | None,
            speed: float | None = None, progress: Callable[[int], None] | None = None,
            batch_size: int = 10_000, wall_clock_timestamps: bool = False) -> int:  # fmt: skip
    """Write every message of ``dataset``; returns how many were written.

    Args:
        dataset: the messages to publish (a generated dataset, a file's rows).
        client: how to reach Kafka.
        topic: created with ``partitions`` partitions when missing.
        partitions: partition count of a new topic (None: ``kafka.topics.partitions``).
        speed: None: as fast as possible; otherwise event time advances ``speed``
            times faster than the wall clock (1.0: real time at the dataset's rate).
        progress: called with the running total after each batch.
        batch_size: messages generated (and reported) at a time.
        wall_clock_timestamps: stamp messages with the time they are sent instead
            of their event time (to measure end-to-end latency from bronze).
    """
    from confluent_kafka import KafkaException

    check_reachable(client.bootstrap)
    ensure_topic(client, topic, partitions)
    before = held_before(client, (topic,))
    failures = DeliveryErrors()
    producer = open_producer(client, "dkg-producer", failures)
    written, started, first_event = 0, time.monotonic(), None
    try:
        for batch in dataset.messages(batch_size=batch_size):
            stamps = batch.timestamps_ms.tolist()
            for key, payload, ts in zip(batch.keys, batch.payloads, stamps, strict=True):
                send(producer, topic, key, payload, time.time_ns() // 1_000_000
                      if wall_clock_timestamps else int(ts))  # fmt: skip
            producer.poll(0)
            written += len(batch)
            if failures.first:
                raise BrokerError(f"producing to {topic} at {client.bootstrap} failed: {failures.first}")
            if speed and len(batch):
                first_event = first_event if first_event is not None else int(stamps[0])
                due = (int(stamps[-1]) - first_event) / 1000.0 / speed
                time.sleep(max(0.0, due - (time.monotonic() - started)))
            if progress is not None:
                progress(written)
        if producer.flush(60.0):
            raise BrokerError(f"producing to {topic} at {client.bootstrap}: messages still unsent after 60 s")
    except KafkaException as exc:
        raise BrokerError(f"producing to {topic} at {client.bootstrap} failed: {exc}") from None
    if failures.first:
        raise BrokerError(f"producing to {topic} at {client.bootstrap} failed: {failures.first}")
    confirm_saved(client, (topic,), before, written)
    logger.info("produced %s messages to %s in %.1f s", f"{written:,}", topic,
                time.monotonic() - started, extra=RESULT)  # fmt: skip
    return written
