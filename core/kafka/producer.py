"""A librdkafka (confluent-kafka) producer with the configured settings, for every writer.

librdkafka reports delivery failures asynchronously;
:class:`DeliveryErrors` keeps the first so the writer can stop with it.
"""

from __future__ import annotations

from typing import Any

from core.kafka.client import KafkaClient

__all__ = ["DeliveryErrors", "open_producer", "send"]


class DeliveryErrors:
    """Collects the first delivery failure that librdkafka reports asynchronously."""

    def __init__(self) -> None:
        self.first: str | None = None

    def __call__(self, error: object, _message: object = None) -> None:
        if error is not None and self.first is None:
            self.first = str(error)


def open_producer(client: KafkaClient, client_id: str, failures: DeliveryErrors) -> Any:
    """A producer with ``kafka.producer``'s settings that reports only failed deliveries."""
    from confluent_kafka import Producer

    settings = client.producer_settings(**{"client.id": client_id, "log_level": 3})
    return Producer({**settings, "on_delivery": failures, "delivery.report.only.error": True})


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
