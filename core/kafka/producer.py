"""A librdkafka (confluent-kafka) producer with the project's settings, for every writer.

kafka-python's per-record Python path tops out near 25,000 messages/s, below the
pipelines' ingest rates. librdkafka reports delivery failures asynchronously;
:class:`DeliveryErrors` keeps the first so the writer can stop with it.
"""

from __future__ import annotations

from typing import Any

__all__ = ["DeliveryErrors", "open_producer", "send"]


class DeliveryErrors:
    """Collects the first delivery failure that librdkafka reports asynchronously."""

    def __init__(self) -> None:
        self.first: str | None = None

    def __call__(self, error: object, _message: object = None) -> None:
        if error is not None and self.first is None:
            self.first = str(error)


def open_producer(bootstrap: str, client_id: str, failures: DeliveryErrors) -> Any:
    """A producer that batches generously and reports only failed deliveries."""
    from confluent_kafka import Producer

    return Producer({
        "bootstrap.servers": bootstrap, "client.id": client_id, "acks": 1,
        "linger.ms": 20, "batch.num.messages": 100_000, "message.max.bytes": 16 << 20,
        "queue.buffering.max.messages": 1_000_000, "log_level": 3,
        # Kafka's default partitioner: the same key lands on the same partition as
        # with the Java client (murmur2), so a key keeps its order.
        "partitioner": "murmur2_random",
        "on_delivery": failures, "delivery.report.only.error": True,
    })  # fmt: skip


def send(producer: Any, topic: str, key: bytes | None, value: bytes, timestamp_ms: int,
         partition: int | None = None) -> None:  # fmt: skip
    """Queue one message, waiting for librdkafka to drain its queue when it is full."""
    where = {} if partition is None else {"partition": partition}
    while True:
        try:
            producer.produce(topic, key=key, value=value, timestamp=timestamp_ms, **where)
            return
        except BufferError:  # local queue full: let librdkafka drain it
            producer.poll(0.05)
