"""Spark schemas (DDL) of the join's intermediate rows and its silver tables' columns."""

from __future__ import annotations

__all__ = ["JOINED_COLUMNS", "JOIN_STATE_DDL", "OPERATOR_DDL", "REJECT_COLUMNS", "STATE_COLUMNS",
           "VALUE_DDL"]  # fmt: skip

VALUE_DDL = "id string, created_ms long, heartbeat boolean"
"""The JSON message value (see ``bronze.join_data.producer``)."""

OPERATOR_DDL = ("shard int, record string, id string, left_created_ms long, right_created_ms long, "
                "left_partition int, left_offset long, right_partition int, right_offset long, "
                "clock_ms long, expiry_ms long, reason string, pending_left long, "
                "pending_right long, state_bytes long")  # fmt: skip

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
