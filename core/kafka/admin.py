"""Topic administration for any Kafka, through librdkafka (confluent-kafka).

Every call takes a :class:`~core.kafka.client.KafkaClient`, so a secured
cluster is asked with the same settings its consumers use. Topics the project
creates get the partitions, replication and topic settings of
``kafka.topics`` (none by default: the cluster's own defaults apply).
"""

from __future__ import annotations

import logging
from typing import Any

from core.kafka.client import KafkaClient
from core.network import connect_problems

__all__ = ["BrokerError", "check_reachable", "end_offsets", "ensure_topic", "topic_exists"]

logger = logging.getLogger(__name__)

_TIMEOUT_S = 10.0


class BrokerError(RuntimeError):
    """Kafka cannot be reached, asked or written as needed."""


def check_reachable(bootstrap: str, timeout_s: float = 3.0) -> None:
    """Fail fast when no bootstrap server accepts TCP connections.

    librdkafka retries an unreachable address for as long as a request's
    timeout; a user who mistyped ``--bootstrap-servers`` hears about it in seconds.
    """
    problems = connect_problems(bootstrap.split(","), timeout_s)
    if problems is None:
        return
    raise BrokerError(f"cannot reach Kafka at {bootstrap}: {', '.join(problems) or 'no servers'}")


def _admin(client: KafkaClient) -> Any:  # confluent-kafka is untyped
    from confluent_kafka.admin import AdminClient

    check_reachable(client.bootstrap)
    return AdminClient(client.admin_settings(**{"client.id": "dkg-admin", "log_level": 3}))


def _topics(client: KafkaClient) -> dict[str, Any]:
    from confluent_kafka import KafkaException

    try:
        return dict(_admin(client).list_topics(timeout=_TIMEOUT_S).topics)
    except KafkaException as exc:
        raise BrokerError(f"cannot list the topics of {client.bootstrap}: {exc}") from None


def topic_exists(client: KafkaClient, topic: str) -> bool:
    """Whether ``topic`` exists (asked without naming it: that could auto-create it)."""
    return topic in _topics(client)


def ensure_topic(client: KafkaClient, topic: str, partitions: int | None = None) -> bool:
    """Create ``topic`` unless it exists; True if this call created it.

    Args:
        client: the Kafka.
        topic: its name.
        partitions: its partitions (default: ``kafka.topics.partitions``).
    """
    from confluent_kafka import KafkaError, KafkaException
    from confluent_kafka.admin import NewTopic

    if topic_exists(client, topic):
        return False
    new = NewTopic(topic, num_partitions=partitions or client.topic_partitions,
                   replication_factor=client.topic_replication or -1,
                   config=dict(client.topic_config))  # fmt: skip
    admin = _admin(client)  # held until the result: a collected client aborts its requests
    try:
        admin.create_topics([new], request_timeout=_TIMEOUT_S)[topic].result()
    except KafkaException as exc:
        if exc.args and exc.args[0].code() == KafkaError.TOPIC_ALREADY_EXISTS:
            return False
        raise BrokerError(f"cannot create topic {topic} on {client.bootstrap}: {exc}") from None
    logger.info("created topic %s on %s", topic, client.bootstrap)
    return True


def end_offsets(client: KafkaClient, topic: str) -> dict[int, int]:
    """Next offset of every partition of ``topic`` (its current end).

    Raises:
        BrokerError: the topic does not exist or Kafka cannot be asked.
    """
    from confluent_kafka import Consumer, KafkaException, TopicPartition

    metadata = _topics(client).get(topic)
    if metadata is None:
        raise BrokerError(f"topic {topic!r} does not exist on {client.bootstrap}")
    consumer = Consumer(client.consumer_settings(**{
        "group.id": "dkg-offsets", "client.id": "dkg-offsets", "enable.auto.commit": False,
        "log_level": 3}))  # fmt: skip
    try:
        return {p: int(consumer.get_watermark_offsets(TopicPartition(topic, p),
                                                      timeout=_TIMEOUT_S)[1])
                for p in sorted(metadata.partitions)}  # fmt: skip
    except KafkaException as exc:
        raise BrokerError(f"cannot read the end offsets of {topic}: {exc}") from None
    finally:
        consumer.close()
