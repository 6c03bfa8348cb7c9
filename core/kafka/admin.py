"""Topic administration for any Kafka, through librdkafka (confluent-kafka).

Every call takes a :class:`~core.kafka.client.KafkaClient`, so a secured
cluster is asked with the same settings its consumers use. Topics the project
creates get the partitions, replication and topic settings of
``kafka.topics`` (none by default: the cluster's own defaults apply).
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

from core.errors import DkgError
from core.kafka.client import KafkaClient
from core.network import connect_problems

__all__ = ["BrokerError", "check_reachable", "end_offsets", "ensure_topic", "librdkafka_problem",
           "quiet_settings", "topic_exists"]

logger = logging.getLogger(__name__)

_TIMEOUT_S = 10.0


class BrokerError(DkgError, RuntimeError):
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


def quiet_settings(errors: list[Any]) -> dict[str, Any]:
    """librdkafka settings that collect a client's errors in ``errors`` instead of printing them.

    librdkafka writes its errors to stderr itself, one line per retry (dozens a
    second against a closed port or a refused login); the caller puts the one
    that says why into its own error (:func:`librdkafka_problem`). The callback
    runs when the client is polled (``consume``, ``poll``).
    """
    return {"log_level": 0, "error_cb": errors.append}


# "sasl_plaintext://127.0.0.1:9092/bootstrap: " and " (after 1ms in state AUTH_REQ, ...)".
_BROKER_PREFIX = re.compile(r"^\S+/(bootstrap|\d+): ")
_STATE_SUFFIX = re.compile(r" \(after \d+ms in state \w+.*\)$")
_SETTINGS_HINT = {
    "_AUTHENTICATION": "check kafka.security_protocol, kafka.sasl_mechanism, kafka.sasl_username "
                       "and kafka.sasl_password",
    "_SSL": "check kafka.security_protocol and the kafka.ssl_* settings",
}  # fmt: skip


def librdkafka_problem(errors: Sequence[Any]) -> str | None:
    """The error among ``errors`` (librdkafka's ``KafkaError``) that says why, with advice.

    A refused login beats everything, and "all brokers are down" only follows
    another error; among the rest, the one librdkafka repeated most (a failed
    handshake's first report may lack the reason its retries give).
    """
    named = [(e.name(), _STATE_SUFFIX.sub("", _BROKER_PREFIX.sub("", e.str()))) for e in errors]
    chosen = ([n for n in named if n[0] == "_AUTHENTICATION"]
              or [n for n in named if n[0] != "_ALL_BROKERS_DOWN"] or named)  # fmt: skip
    if not chosen:
        return None
    name, text = Counter(chosen).most_common(1)[0][0]
    hint = _SETTINGS_HINT.get("_SSL" if "SSL" in text and name == "_TRANSPORT" else name)
    return f"{text} ({hint})" if hint else text


def _why(polled: Any, errors: list[Any], exc: Exception) -> str:
    """Why a request of the client ``polled`` failed: the error librdkafka met meanwhile, else its own."""
    polled.poll(0)  # hands over the errors librdkafka met meanwhile
    return librdkafka_problem(errors) or exc.args[0].str()


def _admin(client: KafkaClient, errors: list[Any]) -> Any:  # confluent-kafka is untyped
    from confluent_kafka.admin import AdminClient

    check_reachable(client.bootstrap)
    return AdminClient(client.admin_settings(**{"client.id": "dkg-admin", **quiet_settings(errors)}))


def _topics(client: KafkaClient) -> dict[str, Any]:
    from confluent_kafka import KafkaException

    errors: list[Any] = []
    admin = _admin(client, errors)
    try:
        return dict(admin.list_topics(timeout=_TIMEOUT_S).topics)
    except KafkaException as exc:
        raise BrokerError(f"cannot list the topics of {client.bootstrap}: "
                          f"{_why(admin, errors, exc)}") from None


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
    errors: list[Any] = []
    admin = _admin(client, errors)  # held until the result: a collected client aborts its requests
    try:
        admin.create_topics([new], request_timeout=_TIMEOUT_S)[topic].result()
    except KafkaException as exc:
        if exc.args and exc.args[0].code() == KafkaError.TOPIC_ALREADY_EXISTS:
            return False
        raise BrokerError(f"cannot create topic {topic} on {client.bootstrap}: "
                          f"{_why(admin, errors, exc)}") from None
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
    errors: list[Any] = []
    consumer = Consumer(client.consumer_settings(**{
        "group.id": "dkg-offsets", "client.id": "dkg-offsets", "enable.auto.commit": False,
        **quiet_settings(errors)}))  # fmt: skip
    try:
        return {p: int(consumer.get_watermark_offsets(TopicPartition(topic, p),
                                                      timeout=_TIMEOUT_S)[1])
                for p in sorted(metadata.partitions)}  # fmt: skip
    except KafkaException as exc:
        raise BrokerError(f"cannot read the end offsets of {topic}: "
                          f"{_why(consumer, errors, exc)}") from None
    finally:
        consumer.close()
