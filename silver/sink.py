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

from core.profiling import timed
from core.tables.base import TableBackend, TablePath, to_arrow
from core.tables.sink import written_everywhere
from silver.blocks import routed_rows

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = [
    "QUARANTINE_COLUMNS",
    "ROUTED_TABLE_COLUMNS",
    "SNAPSHOT_COLUMNS",
    "silver_batch_writer",
]

logger = logging.getLogger(__name__)

ROUTED_TABLE_COLUMNS = ["run_id", "splitter", "partition", "offset", "tuple_index", "key", "count",
                        "event_time_ms", "worker"]  # fmt: skip
QUARANTINE_COLUMNS = ["run_id", "partition", "offset", "error", "payload"]
SNAPSHOT_COLUMNS = ["run_id", "splitter", "event_time_ms", "state"]


def silver_batch_writer(backend: TableBackend, routed_path: TablePath, quarantine_path: TablePath,
                        app_id: str, snapshots_path: TablePath | None = None):  # fmt: skip
    """The ``foreachBatch`` function of the silver query (``ROUTED_BLOCKS_DDL`` rows).

    Snapshot records (the splitters' grouping states) go to ``snapshots_path``
    when given, and are dropped otherwise.
    """
    paths = [p for p in (routed_path, quarantine_path, snapshots_path) if p is not None]

    def write_batch(df: DataFrame, batch_id: int) -> None:
        if written_everywhere(backend, paths, app_id, batch_id):
            return  # a replay of a batch already in every table
        with timed("collect"):  # parse and route: the whole Spark plan runs here
            batch = routed_rows(to_arrow(df))
        kind = batch["record"]
        routed = batch.filter(pc.equal(kind, "tuple")).select(ROUTED_TABLE_COLUMNS)
        quarantined = batch.filter(pc.equal(kind, "quarantine")).select(QUARANTINE_COLUMNS)
        with timed("delta_write"):
            backend.append(routed_path, routed, app_id, batch_id)
            backend.append(quarantine_path, quarantined, app_id, batch_id)
            if snapshots_path is not None:
                snapshots = batch.filter(pc.equal(kind, "snapshot"))
                snapshots = snapshots.select(["run_id", "splitter", "event_time_ms", "payload"])
                backend.append(snapshots_path, snapshots.rename_columns(SNAPSHOT_COLUMNS), app_id,
                               batch_id)  # fmt: skip
        logger.debug("silver batch %d: %d routed, %d quarantined", batch_id, routed.num_rows,
                    quarantined.num_rows)  # fmt: skip

    return write_batch
