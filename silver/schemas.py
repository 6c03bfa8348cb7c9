"""Silver table schemas: parsed tuples with their worker, and quarantined messages."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

__all__ = [
    "BRONZE_INPUT",
    "JOINED",
    "JOIN_REJECTS",
    "JOIN_STATE",
    "QUARANTINE",
    "QUARANTINE_ARROW",
    "ROUTED_ARROW",
    "ROUTED_TABLE",
    "ROUTED_TABLE_ARROW",
    "ROUTED_TABLE_COLUMNS",
    "ROUTING_SNAPSHOTS",
    "ROUTING_STATE_DDL",
    "ROUTING_TARGETS",
    "SNAPSHOTS_ARROW",
    "WORKER_BUSY",
    "WORKER_LATENCY",
    "WORKER_WINDOWS",
    "split_routed",
]  # fmt: skip

# Silver's tables (layer, name), each named here only.
ROUTED_TABLE = ("silver", "routed")
"""Parsed tuples with the worker the grouping chose."""
QUARANTINE = ("silver", "quarantine")
"""Messages that could not be parsed, with the reason."""
ROUTING_SNAPSHOTS = ("silver", "routing_snapshots")
"""Each splitter's grouping state after a micro-batch."""
WORKER_LATENCY = ("silver", "worker_latency")
"""The workers' waits per window and latency."""
WORKER_WINDOWS = ("silver", "worker_windows")
"""The workers' windowed partials: the last silver table a run writes, gold's input."""
WORKER_BUSY = ("silver", "worker_busy")
"""Each worker's measured busy time per micro-batch (physical mode only)."""
JOINED = ("silver", "joined")
"""The join's matched pairs and unmatched lefts."""
JOIN_REJECTS = ("silver", "join_rejects")
"""The join's late and orphan rights, duplicates and quarantined records."""
JOIN_STATE = ("silver", "join_state")
"""The join's state size per shard and micro-batch."""


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

# The silver tables the routing step's rows go to.
ROUTED_TABLE_COLUMNS = ["run_id", "splitter", "partition", "offset", "tuple_index", "key", "count",
                        "event_time_ms", "worker"]  # fmt: skip
ROUTED_TABLE_ARROW = pa.schema([ROUTED_ARROW.field(name) for name in ROUTED_TABLE_COLUMNS])
QUARANTINE_ARROW = pa.schema([ROUTED_ARROW.field(name) for name in
                              ("run_id", "partition", "offset", "error", "payload")])  # fmt: skip
SNAPSHOTS_ARROW = pa.schema([ROUTED_ARROW.field("run_id"), ROUTED_ARROW.field("splitter"),
                             ROUTED_ARROW.field("event_time_ms"), pa.field("state", pa.binary())])  # fmt: skip

ROUTING_TARGETS = {"routed": ("tuple", ROUTED_TABLE_ARROW),
                   "quarantine": ("quarantine", QUARANTINE_ARROW),
                   "snapshots": ("snapshot", SNAPSHOTS_ARROW)}  # fmt: skip
"""Each routing output table (target name): the record kind it holds, and its schema."""


def split_routed(rows: pa.Table) -> dict[str, pa.Table]:
    """The routing step's rows (``ROUTED_ARROW``) as each routing target's rows."""
    out = {}
    for target, (kind, schema) in ROUTING_TARGETS.items():
        part = rows.filter(pc.equal(rows["record"], kind))
        if target == "snapshots":
            part = part.rename_columns({"payload": "state"})
        out[target] = part.select(schema.names).cast(schema)
    return out
