"""Writes a dataset's messages into a Kafka topic (kafka-python), keyed, at a set speed.

The Kafka timestamp of each message is its event time, and the key is the
message's first tuple key, so Kafka's default partitioner keeps a key's order
within its partition.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from bronze.datasets.base import Dataset
from pipelines.core.broker import BrokerError, check_reachable, ensure_topic

__all__ = ["produce"]

logger = logging.getLogger(__name__)


def produce(dataset: Dataset, bootstrap: str, topic: str, partitions: int,
            speed: float | None = None, progress: Callable[[int], None] | None = None,
            batch_size: int = 10_000) -> int:  # fmt: skip
    """Write every message of ``dataset``; returns how many were written.

    Args:
        dataset: the generator to publish.
        bootstrap: Kafka bootstrap servers.
        topic: created with ``partitions`` partitions when missing.
        partitions: partition count of a new topic.
        speed: None: as fast as possible; otherwise event time advances ``speed``
            times faster than the wall clock (1.0: real time at the dataset's rate).
        progress: called with the running total after each batch.
        batch_size: messages generated (and reported) at a time.
    """
    from kafka import KafkaProducer
    from kafka.errors import KafkaError

    check_reachable(bootstrap)
    ensure_topic(bootstrap, topic, partitions)
    producer = KafkaProducer(bootstrap_servers=bootstrap, linger_ms=20, batch_size=1 << 20,
                             max_request_size=16 << 20, acks=1, enable_idempotence=False,
                             client_id="dkg-producer")  # fmt: skip
    written, started, first_event = 0, time.monotonic(), None
    try:
        for batch in dataset.messages(batch_size=batch_size):
            for key, payload, ts in zip(batch.keys, batch.payloads, batch.timestamps_ms.tolist(),
                                        strict=True):  # fmt: skip
                producer.send(topic, key=key, value=payload, timestamp_ms=int(ts))
            written += len(batch)
            if speed and len(batch):
                first_event = first_event if first_event is not None else int(batch.timestamps_ms[0])
                due = (int(batch.timestamps_ms[-1]) - first_event) / 1000.0 / speed
                time.sleep(max(0.0, due - (time.monotonic() - started)))
            if progress is not None:
                progress(written)
        producer.flush()
    except KafkaError as exc:
        raise BrokerError(f"producing to {topic} at {bootstrap} failed: {exc}") from None
    finally:
        producer.close()
    logger.info("produced %d messages to %s in %.1f s", written, topic, time.monotonic() - started)
    return written
