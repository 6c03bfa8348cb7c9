"""How the project's clients reach one Kafka: librdkafka settings per client kind.

Built once from the ``kafka`` settings and the bootstrap address (the user's,
or the embedded broker's). Everything the user sets passes to librdkafka as it
is: security settings, then ``client``, then the per-kind map. The object is
plain data, so it travels to Spark executors inside the Kafka source; its
``repr`` hides every value, secrets included.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the settings' models (pydantic) only where a client is built from them:
    # Spark's planner processes import this module on every query start.
    from core.config.models import KafkaConfig

__all__ = ["KafkaClient"]


def _security(config: KafkaConfig) -> dict[str, str]:
    settings = {"security.protocol": config.security_protocol.lower()}
    named = {
        "sasl.mechanism": config.sasl_mechanism,
        "sasl.username": config.sasl_username,
        "sasl.password": config.sasl_password.get_secret_value() if config.sasl_password else None,
        "ssl.ca.location": config.ssl_ca_location,
        "ssl.certificate.location": config.ssl_certificate_location,
        "ssl.key.location": config.ssl_key_location,
        "ssl.key.password": (config.ssl_key_password.get_secret_value()
                             if config.ssl_key_password else None),
    }  # fmt: skip
    return settings | {key: str(value) for key, value in named.items() if value is not None}


@dataclass(frozen=True, repr=False)
class KafkaClient:
    """Connection settings of every client kind, and how the project creates topics.

    Attributes:
        bootstrap: ``HOST:PORT[,...]``.
        common: settings of every client (bootstrap, security, ``kafka.client``).
        consumer: consumer-only settings.
        producer: producer-only settings.
        admin: admin-only settings.
        topic_partitions: partitions of a topic the project creates.
        topic_replication: its replication factor; None: the broker's default.
        topic_config: its topic settings.
        embedded_run_dir: the embedded broker's run folder when this is that broker
            (writers then wait until it saved their messages); None for a user's Kafka.
        read_stall_s: how long a read task waits for its range's next message.
    """

    bootstrap: str
    common: dict[str, str] = field(default_factory=dict)
    consumer: dict[str, str] = field(default_factory=dict)
    producer: dict[str, str] = field(default_factory=dict)
    admin: dict[str, str] = field(default_factory=dict)
    topic_partitions: int = 4
    topic_replication: int | None = None
    topic_config: dict[str, str] = field(default_factory=dict)
    embedded_run_dir: str | None = None
    read_stall_s: float = 60.0

    @classmethod
    def from_config(cls, config: KafkaConfig, bootstrap: str,
                    embedded_run_dir: str | None = None) -> KafkaClient:  # fmt: skip
        """The clients of ``config`` against ``bootstrap`` (the embedded broker's if ``embedded_run_dir``)."""
        from core.config.secrets import reveal

        common = {"bootstrap.servers": bootstrap, **_security(config), **reveal(config.client)}
        return cls(bootstrap, common, reveal(config.consumer), reveal(config.producer),
                   reveal(config.admin), config.topics.partitions,
                   config.topics.replication_factor, reveal(config.topics.config),
                   embedded_run_dir, config.read_stall_s)  # fmt: skip

    def __repr__(self) -> str:
        """Only where the clients connect: settings may hold secrets."""
        return f"KafkaClient({self.bootstrap!r})"

    def consumer_settings(self, **extra: Any) -> dict[str, Any]:
        """librdkafka settings of a consumer; ``extra`` (the caller's own) under the user's."""
        return {**extra, **self.common, **self.consumer}

    def producer_settings(self, **extra: Any) -> dict[str, Any]:
        """librdkafka settings of a producer; ``extra`` under the user's."""
        return {**extra, **self.common, **self.producer}

    def admin_settings(self, **extra: Any) -> dict[str, Any]:
        """librdkafka settings of an admin client; ``extra`` under the user's."""
        return {**extra, **self.common, **self.admin}

