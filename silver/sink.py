"""Silver's micro-batch writer: routed tuples, quarantined messages and snapshots, exactly once.

The routing step's packed output is split into ``silver.routed``,
``silver.quarantine`` and ``silver.routing_snapshots``. With delta-rs the
tasks that route write the three tables' files themselves and the driver
commits only their names (:mod:`core.tables.task_files`); with delta-spark the
rows are appended natively, by the executors too. Each table records the batch
id under the query's application id, so a batch replayed after a crash between
two commits completes the missing ones only.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import from_arrow_schema

from core.storage import Storage
from core.tables.base import TableBackend, TablePath
from core.tables.delta_rs import DeltaRsBackend
from core.tables.sink import BatchWriter, written_everywhere
from core.tables.task_files import task_file_name, task_files_writer, write_task_files
from silver.blocks import unpack
from silver.schemas import ROUTED_ARROW

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = ["QUARANTINE_ARROW", "ROUTED_TABLE_ARROW", "ROUTED_TABLE_COLUMNS", "SNAPSHOTS_ARROW",
           "SilverTables", "silver_batch_writer", "split_routed"]  # fmt: skip

ROUTED_TABLE_COLUMNS = ["run_id", "splitter", "partition", "offset", "tuple_index", "key", "count",
                        "event_time_ms", "worker"]  # fmt: skip
ROUTED_TABLE_ARROW = pa.schema([ROUTED_ARROW.field(name) for name in ROUTED_TABLE_COLUMNS])
QUARANTINE_ARROW = pa.schema([ROUTED_ARROW.field(name) for name in
                              ("run_id", "partition", "offset", "error", "payload")])  # fmt: skip
SNAPSHOTS_ARROW = pa.schema([ROUTED_ARROW.field("run_id"), ROUTED_ARROW.field("splitter"),
                             ROUTED_ARROW.field("event_time_ms"), pa.field("state", pa.binary())])  # fmt: skip

# Each table: the routing output's record kind it holds, and its schema.
_KINDS = {"routed": ("tuple", ROUTED_TABLE_ARROW), "quarantine": ("quarantine", QUARANTINE_ARROW),
          "snapshots": ("snapshot", SNAPSHOTS_ARROW)}  # fmt: skip


@dataclass(frozen=True)
class SilverTables:
    """Where the routing step's output goes (table URIs)."""

    routed: str
    quarantine: str
    snapshots: str

    def by_target(self) -> dict[str, str]:
        """Target name (``routed``, ``quarantine``, ``snapshots``) -> table."""
        return {"routed": self.routed, "quarantine": self.quarantine, "snapshots": self.snapshots}


def split_routed(rows: pa.Table) -> dict[str, pa.Table]:
    """The routing step's rows (``ROUTED_ARROW``) as each silver table's rows."""
    out = {}
    for target, (kind, schema) in _KINDS.items():
        part = rows.filter(pc.equal(rows["record"], kind))
        if target == "snapshots":
            part = part.rename_columns({"payload": "state"})
        out[target] = part.select(schema.names).cast(schema)
    return out


def _write_routed_files(batches: Iterator[pa.RecordBatch], storage: Storage,
                        tables: Mapping[str, str], app_id: str,
                        batch_id: int) -> Iterator[pa.RecordBatch]:  # fmt: skip
    blocks = [block for batch in batches for block in batch.column("block").to_pylist()]
    if blocks:
        parts = split_routed(unpack(blocks, ROUTED_ARROW))
        outputs = {target: (tables[target], parts[target]) for target in tables}
        yield write_task_files(storage, outputs, task_file_name(app_id, batch_id))


def _unpacked_rows(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    for batch in batches:
        if batch.num_rows:
            yield from unpack(batch.column("block").to_pylist(), ROUTED_ARROW).to_batches()


def silver_batch_writer(backend: TableBackend, storage: Storage, tables: SilverTables,
                        app_id: str) -> BatchWriter:  # fmt: skip
    """The ``foreachBatch`` function of the silver query (``ROUTED_BLOCKS_DDL`` rows)."""
    paths: dict[str, TablePath] = dict(tables.by_target())
    if isinstance(backend, DeltaRsBackend):
        for target, (_, schema) in _KINDS.items():
            backend.create_if_missing(paths[target], schema)

    def write_natively(df: DataFrame, batch_id: int) -> None:
        if written_everywhere(backend, list(paths.values()), app_id, batch_id):
            return
        rows = df.mapInArrow(_unpacked_rows, from_arrow_schema(ROUTED_ARROW)).persist()
        try:
            for target, (kind, schema) in _KINDS.items():
                part = rows.where(F.col("record") == kind)
                if target == "snapshots":
                    part = part.withColumnRenamed("payload", "state")
                backend.append(paths[target], part.select(*schema.names), app_id, batch_id)
        finally:
            rows.unpersist()

    if isinstance(backend, DeltaRsBackend):
        write = functools.partial(_write_routed_files, storage=storage, tables=paths, app_id=app_id)
        return task_files_writer(backend, paths, app_id, write)
    return write_natively
