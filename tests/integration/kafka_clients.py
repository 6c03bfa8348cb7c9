"""Kafka clients of a test broker."""

from __future__ import annotations

from core.config import load_settings
from core.kafka.client import KafkaClient

__all__ = ["local_client"]


def local_client(bootstrap: str) -> KafkaClient:
    """Clients of a test broker, with the local profile's settings (as the CLI uses them)."""
    return KafkaClient.from_config(load_settings(env={}).settings.kafka, bootstrap)
