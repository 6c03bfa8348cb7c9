"""Bronze table schemas: every Kafka message exactly as received."""

from __future__ import annotations

__all__ = ["RAW_EVENTS_COLUMNS", "RAW_EVENTS_DDL"]

# Same columns as Spark's Kafka source, plus the run that landed the message.
RAW_EVENTS_DDL = (
    "run_id STRING, topic STRING, partition INT, offset LONG, timestamp TIMESTAMP, "
    "key BINARY, value BINARY"
)
RAW_EVENTS_COLUMNS = ("run_id", "topic", "partition", "offset", "timestamp", "key", "value")
