"""Silver table schemas: parsed tuples with their worker, and quarantined messages."""

from __future__ import annotations

__all__ = ["ROUTED_DDL", "ROUTING_STATE_DDL"]

# One row per tuple, or one row per unparseable message (``error`` set, tuple fields null).
_PARSED_DDL = (
    "run_id STRING, splitter INT, partition INT, offset LONG, tuple_index INT, "
    "key STRING, count LONG, event_time_ms LONG, error STRING, payload BINARY"
)
# The routing step's output: parsed rows plus the worker (-1 for quarantined rows), and
# ``record``: 'tuple', 'quarantine', or 'snapshot' (the splitter's grouping state in
# ``payload`` after the batch, at the batch's last event time).
ROUTED_DDL = _PARSED_DDL + ", worker INT, record STRING"
# The grouping's snapshot rides in the applyInPandasWithState state row.
ROUTING_STATE_DDL = "grouping_state BINARY"
