"""``gold.hot_keys``: keys spread over more than their initial workers, and why, over time.

Built from ``silver.routing_snapshots``: each splitter's grouping state after
each micro-batch is restored and asked for its hot keys, so the table shows
how hot keys' pools grew and shrank in event time.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from silver.groupings.registry import grouping_class
from silver.schemas import SNAPSHOTS_ARROW

__all__ = ["HOT_KEYS_ARROW", "hot_keys_from_snapshots"]

HOT_KEYS_ARROW = pa.schema([("run_id", pa.string()), ("splitter", pa.int32()),
                            ("as_of_ms", pa.int64()), ("key", pa.string()),
                            ("pool_size", pa.int32()), ("workers", pa.list_(pa.int64())),
                            ("estimated_share", pa.float64()), ("reason", pa.string())])  # fmt: skip


def hot_keys_from_snapshots(snapshots: pa.Table, grouping: str, workers: int,
                            params: dict[str, Any]) -> pa.Table:  # fmt: skip
    """One row per hot key per snapshot (run, splitter, event time of the snapshot)."""
    cls = grouping_class(grouping)
    validated = cls.params_type(**params)
    columns: dict[str, list[Any]] = {name: [] for name in HOT_KEYS_ARROW.names}
    taken = [snapshots[name].to_pylist() for name in SNAPSHOTS_ARROW.names]
    for run_id, splitter, as_of_ms, state in zip(*taken, strict=True):
        for hot in cls.restore(workers, validated, state).hot_keys():
            row = (run_id, splitter, as_of_ms, hot.key, hot.pool_size, list(hot.workers),
                   hot.estimated_share, hot.reason)  # fmt: skip
            for column, value in zip(columns.values(), row, strict=True):
                column.append(value)
    return pa.table(columns, schema=HOT_KEYS_ARROW)
