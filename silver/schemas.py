"""Silver table schemas: parsed tuples with their worker, and quarantined messages."""

from __future__ import annotations

import pyarrow as pa

__all__ = ["BRONZE_INPUT", "ROUTED_ARROW", "ROUTED_DDL", "ROUTING_STATE_DDL"]

# What parsing needs of a bronze row; the Kafka key and topic stay in bronze.
BRONZE_INPUT = ("run_id", "partition", "offset", "timestamp", "value")

# The routing step's output: one row per tuple, or one row per unparseable message
# (``error`` set, tuple fields null), with the worker (-1 for quarantined rows), and
# ``record``: 'tuple', 'quarantine', or 'snapshot' (the splitter's grouping state in
# ``payload`` after the batch, at the batch's last event time).
# Numbers first, text last: pyspark concatenates the output frames, and pandas
# then scans every value of a run of all-null text columns (error, payload) in
# Python unless they sit in one block with the key.
ROUTED_DDL = (
    "splitter INT, partition INT, offset LONG, tuple_index INT, count LONG, "
    "event_time_ms LONG, worker INT, run_id STRING, key STRING, error STRING, "
    "payload BINARY, record STRING"
)
# The same, as the Arrow schema of the routing step's packed output.
ROUTED_ARROW = pa.schema([
    ("splitter", pa.int32()), ("partition", pa.int32()), ("offset", pa.int64()),
    ("tuple_index", pa.int32()), ("count", pa.int64()), ("event_time_ms", pa.int64()),
    ("worker", pa.int32()), ("run_id", pa.string()), ("key", pa.string()),
    ("error", pa.string()), ("payload", pa.binary()), ("record", pa.string()),
])  # fmt: skip
# The grouping's snapshot rides in the applyInPandasWithState state row.
ROUTING_STATE_DDL = "grouping_state BINARY"
