"""Schemas of the join's intermediate rows and of its silver tables."""

from __future__ import annotations

import pyarrow as pa

__all__ = ["JOINED_ARROW", "JOINED_COLUMNS", "JOIN_OUTPUT_DDL", "JOIN_STATE_DDL", "OPERATOR_ARROW",
           "PARSED_ARROW", "REJECTS_ARROW", "REJECT_COLUMNS", "STATE_ARROW", "STATE_COLUMNS",
           "VALUE_ARROW", "table_of"]  # fmt: skip

VALUE_ARROW = pa.schema([("id", pa.string()), ("created_ms", pa.int64()),
                         ("heartbeat", pa.bool_())])  # fmt: skip
"""The JSON message value (see ``bronze.join_data.producer``)."""

PARSED_ARROW = pa.schema([("side", pa.int32()), ("partition", pa.int32()), ("offset", pa.int64()),
                          ("id", pa.string()), ("created_ms", pa.int64()), ("error", pa.string())])  # fmt: skip
"""A message of either topic parsed (``silver.join.parsing``): ``error`` says why it cannot join."""

OPERATOR_ARROW = pa.schema([
    ("shard", pa.int32()), ("record", pa.string()), ("id", pa.string()),
    ("left_created_ms", pa.int64()), ("right_created_ms", pa.int64()),
    ("left_partition", pa.int32()), ("left_offset", pa.int64()),
    ("right_partition", pa.int32()), ("right_offset", pa.int64()), ("clock_ms", pa.int64()),
    ("expiry_ms", pa.int64()), ("reason", pa.string()), ("pending_left", pa.int64()),
    ("pending_right", pa.int64()), ("state_bytes", pa.int64()),
    ("run_id", pa.string()), ("batch_id", pa.int64()),
])  # fmt: skip
"""What one shard emits in a micro-batch (``silver.join.operator``), every table's columns."""

JOIN_OUTPUT_DDL = "kind STRING, rows LONG, block BINARY"
"""The join step's output: packed rows of one table (``kind`` = its name), or its files."""

JOIN_STATE_DDL = "snapshot binary"

JOINED_COLUMNS = ["run_id", "batch_id", "record", "id", "left_created_ms", "right_created_ms",
                  "left_partition", "left_offset", "right_partition", "right_offset", "clock_ms",
                  "expiry_ms"]  # fmt: skip
"""``silver.joined``: matched pairs and unmatched lefts (``record`` = matched | unmatched)."""

REJECT_COLUMNS = ["run_id", "batch_id", "record", "id", "left_created_ms", "right_created_ms",
                  "left_partition", "left_offset", "right_partition", "right_offset", "clock_ms",
                  "reason"]  # fmt: skip
"""``silver.join_rejects``: late_right, orphan_right, duplicate and quarantine rows."""

STATE_COLUMNS = ["run_id", "batch_id", "shard", "clock_ms", "expiry_ms", "pending_left",
                 "pending_right", "state_bytes"]  # fmt: skip
"""``silver.join_state``: one row per shard and micro-batch (how big the state is)."""

JOINED_ARROW, REJECTS_ARROW, STATE_ARROW = (
    pa.schema([OPERATOR_ARROW.field(name) for name in columns])
    for columns in (JOINED_COLUMNS, REJECT_COLUMNS, STATE_COLUMNS)
)


def table_of(schema: pa.Schema, rows: int, **columns: pa.Array | pa.ChunkedArray) -> pa.Table:
    """``rows`` rows of ``schema``: the given columns, every other one null."""
    return pa.table([columns[field.name] if field.name in columns else pa.nulls(rows, field.type)
                     for field in schema], schema=schema)  # fmt: skip
