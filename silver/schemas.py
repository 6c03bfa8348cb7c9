"""Silver table schemas: parsed tuples with their worker, and quarantined messages."""

from __future__ import annotations

import pyarrow as pa

__all__ = ["BRONZE_INPUT", "ROUTED_ARROW", "ROUTING_STATE_DDL"]

# What parsing needs of a bronze row; the Kafka key and topic stay in bronze.
BRONZE_INPUT = ("run_id", "partition", "offset", "timestamp", "value")

# The routing step's output (packed, see silver.blocks): one row per tuple, or one
# row per unparseable message (``error`` set, tuple fields null), with the worker
# (-1 for quarantined rows), and ``record``: 'tuple', 'quarantine', or 'snapshot'
# (the splitter's grouping state in ``payload`` after the batch, at the batch's
# last event time).
ROUTED_ARROW = pa.schema([
    ("splitter", pa.int32()), ("partition", pa.int32()), ("offset", pa.int64()),
    ("tuple_index", pa.int32()), ("count", pa.int64()), ("event_time_ms", pa.int64()),
    ("worker", pa.int32()), ("run_id", pa.string()), ("key", pa.string()),
    ("error", pa.string()), ("payload", pa.binary()), ("record", pa.string()),
])  # fmt: skip
# The grouping's snapshot rides in the applyInPandasWithState state row.
ROUTING_STATE_DDL = "grouping_state BINARY"
