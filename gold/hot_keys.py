"""``gold.hot_keys``: keys spread over more than their initial workers, and why, over time.

Built from ``silver.routing_snapshots``: each splitter's grouping state after
each micro-batch is restored and asked for its hot keys, so the table shows
how hot keys' pools grew and shrank in event time.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from silver.groupings.registry import grouping_class

__all__ = ["HOT_KEY_COLUMNS", "hot_keys_from_snapshots"]

HOT_KEY_COLUMNS = ["run_id", "splitter", "as_of_ms", "key", "pool_size", "workers",
                   "estimated_share", "reason"]  # fmt: skip


def hot_keys_from_snapshots(snapshots: pd.DataFrame, grouping: str, workers: int,
                            params: dict[str, Any]) -> pd.DataFrame:  # fmt: skip
    """One row per hot key per snapshot (run, splitter, event time of the snapshot)."""
    cls = grouping_class(grouping)
    validated = cls.params_type(**params)
    rows = []
    for snapshot in snapshots.itertuples(index=False):
        router = cls.restore(workers, validated, bytes(snapshot.state))
        for hot in router.hot_keys():
            rows.append((snapshot.run_id, int(snapshot.splitter), snapshot.event_time_ms, hot.key,
                         hot.pool_size, list(hot.workers), hot.estimated_share, hot.reason))  # fmt: skip
    frame = pd.DataFrame(rows, columns=HOT_KEY_COLUMNS)
    return frame.astype({"splitter": "int32", "pool_size": "int32", "as_of_ms": "Int64"})
