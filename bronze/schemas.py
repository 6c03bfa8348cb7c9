"""Bronze table schemas: every Kafka message exactly as received."""

from __future__ import annotations

import pyarrow as pa

__all__ = ["RAW_EVENTS", "RAW_EVENTS_ARROW", "RAW_EVENTS_COLUMNS"]

RAW_EVENTS = ("bronze", "raw_events")
"""Bronze's table (layer, name): every message as received."""

# Same columns as Spark's Kafka source, plus the run that landed the message.
RAW_EVENTS_COLUMNS = ("run_id", "topic", "partition", "offset", "timestamp", "key", "value")
# The Arrow schema of the table (what Spark's rows convert to).
RAW_EVENTS_ARROW = pa.schema([
    ("run_id", pa.string()), ("topic", pa.string()), ("partition", pa.int32()),
    ("offset", pa.int64()), ("timestamp", pa.timestamp("us", tz="UTC")),
    ("key", pa.binary()), ("value", pa.binary()),
])  # fmt: skip
