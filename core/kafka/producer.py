"""A librdkafka (confluent-kafka) producer with the configured settings, for every writer.

librdkafka reports delivery failures asynchronously;
:class:`DeliveryErrors` keeps the first so the writer can stop with it.
A writer to the embedded broker counts with :func:`held_before` and ends with
:func:`confirm_saved`.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from core.kafka.admin import BrokerError, end_offsets, topic_exists
from core.kafka.broker import LocalBroker
from core.kafka.client import KafkaClient

__all__ = ["DeliveryErrors", "confirm_saved", "held_before", "open_producer", "send"]

logger = logging.getLogger(__name__)


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


def send(producer: Any, topic: str, key: bytes | None, value: bytes | None, timestamp_ms: int,
         partition: int | None = None) -> None:  # fmt: skip
    """Queue one message, waiting for librdkafka to drain its queue when it is full."""
    where = {} if partition is None else {"partition": partition}
    while True:
        try:
            producer.produce(topic, key=key, value=value, timestamp=timestamp_ms, **where)
            return
        except BufferError:  # local queue full: let librdkafka drain it
            producer.poll(0.05)


def held_before(client: KafkaClient, topics: tuple[str, ...]) -> int | None:
    """Messages ``topics`` hold on the embedded broker before a write; None for a user's Kafka."""
    if client.embedded_run_dir is None:
        return None
    return sum(sum(end_offsets(client, t).values()) for t in topics if topic_exists(client, t))


def confirm_saved(client: KafkaClient, topics: tuple[str, ...], before: int | None,
                  written: int) -> None:  # fmt: skip
    """Return once the embedded broker holds, on disk, the ``written`` messages of ``topics``.

    Call it after a flush, with :func:`held_before`'s count. The embedded broker
    acknowledges messages it holds only in memory, so until its next snapshot a
    SIGKILL would lose them. A user's Kafka (``before`` is None) is left to its own
    durability (``acks``).

    Raises:
        BrokerError: the broker holds fewer messages than were written, stopped, or
            did not save them in time.
    """
    if before is None or client.embedded_run_dir is None:
        return
    ends = {topic: end_offsets(client, topic) for topic in topics}
    held = sum(sum(offsets.values()) for offsets in ends.values()) - before
    if held < written:
        raise BrokerError(f"the embedded broker holds {held} of the {written} messages written "
                          f"to {', '.join(topics)}; run the command again")  # fmt: skip
    waited = LocalBroker(Path(client.embedded_run_dir)).wait_saved(ends)
    logger.info("the embedded broker saved %s to disk after %.2f s", ", ".join(topics), waited)
