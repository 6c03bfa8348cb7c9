"""Silver's micro-batch writer: routed tuples and quarantined messages, exactly once.

The routed micro-batch is computed once (one Arrow conversion, so the stateful
routing runs once) and split into ``silver.routed`` and ``silver.quarantine``.
Each table records the batch id under its own application id, so a batch
replayed after a crash between the two writes completes the missing one only.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import pyarrow.compute as pc

from pipelines.core.tables.base import TableBackend, TablePath, to_arrow

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = ["QUARANTINE_COLUMNS", "ROUTED_TABLE_COLUMNS", "silver_batch_writer"]

logger = logging.getLogger(__name__)

ROUTED_TABLE_COLUMNS = ["run_id", "splitter", "partition", "offset", "tuple_index", "key", "count",
                        "event_time_ms", "worker"]  # fmt: skip
QUARANTINE_COLUMNS = ["run_id", "partition", "offset", "error", "payload"]


def silver_batch_writer(backend: TableBackend, routed_path: TablePath, quarantine_path: TablePath,
                        app_id: str):  # fmt: skip
    """The ``foreachBatch`` function of the silver query."""

    def pending(path: TablePath, batch_id: int) -> bool:
        last = backend.transaction_version(path, app_id)
        return last is None or last < batch_id

    def write_batch(df: DataFrame, batch_id: int) -> None:
        if not (pending(routed_path, batch_id) or pending(quarantine_path, batch_id)):
            return  # a replay of a batch already in both tables
        batch = to_arrow(df)
        bad = pc.is_valid(batch["error"])
        routed = batch.filter(pc.invert(bad)).select(ROUTED_TABLE_COLUMNS)
        quarantined = batch.filter(bad).select(QUARANTINE_COLUMNS)
        backend.append(routed_path, routed, app_id, batch_id)
        backend.append(quarantine_path, quarantined, app_id, batch_id)
        logger.info("silver batch %d: %d routed, %d quarantined", batch_id, routed.num_rows,
                    quarantined.num_rows)  # fmt: skip

    return write_batch
