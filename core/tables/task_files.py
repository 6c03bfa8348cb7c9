"""Data files written by Spark tasks and committed by the driver: no rows cross to the driver.

A micro-batch's tasks write their share of each output table as Parquet in the
table's folder and hand Spark one row per file (:data:`TASK_FILES_DDL`); the
query's ``foreachBatch`` collects those rows and commits each table's files in
one Delta append that records the batch id (:meth:`DeltaRsBackend.add_files`).
A file that no commit names is never read, so a task retried or a batch
replayed after a crash only rewrites files: names follow from the application
id, the batch id and a part number the writing step owns (a Kafka range, a
splitter, a worker), and the plans are deterministic.
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from core.profiling import timed
from core.storage import Storage
from core.tables.base import DataFile, TableBackend, TablePath

__all__ = ["TASK_FILES_ARROW", "TASK_FILES_DDL", "TaskLanding", "commit_task_files",
           "streaming_batch_id", "task_file_name", "write_task_files"]  # fmt: skip

_BATCH_ID_PROPERTY = "streaming.sql.batchId"  # MicroBatchExecution.BATCH_ID_KEY

logger = logging.getLogger(__name__)

TASK_FILES_DDL = "target STRING, name STRING, size LONG, rows LONG"
"""One row per written file: which output table (a caller's name), file name, bytes, rows."""
TASK_FILES_ARROW = pa.schema([("target", pa.string()), ("name", pa.string()),
                              ("size", pa.int64()), ("rows", pa.int64())])  # fmt: skip


def task_file_name(app_id: str, batch_id: int, part: int) -> str:
    """The file name of part ``part`` of ``batch_id``'s output (same in every table's folder)."""
    # Readable, and unique per application id even when two ids sanitize alike.
    tag = re.sub(r"[^A-Za-z0-9_.-]+", "_", app_id)[:80]
    digest = hashlib.sha256(app_id.encode()).hexdigest()[:8]
    return f"{tag}-{digest}-b{batch_id}-t{part}.snappy.parquet"


def write_task_files(storage: Storage, outputs: Mapping[str, tuple[str, pa.Table]],
                     name: str) -> pa.RecordBatch:  # fmt: skip
    """Write each non-empty output as ``name`` in its table's folder (runs in a task).

    Args:
        storage: where the tables are.
        outputs: target name -> (table URI, rows in the table's schema).
        name: the file name (:func:`task_file_name`).

    Returns:
        One :data:`TASK_FILES_DDL` row per file written.
    """
    written = [(target, name, storage.write_parquet(table, name, data), data.num_rows)
               for target, (table, data) in outputs.items() if data.num_rows]  # fmt: skip
    columns = list(zip(*written, strict=True)) if written else [[], [], [], []]
    return pa.RecordBatch.from_arrays([pa.array(c, f.type) for c, f in
                                       zip(columns, TASK_FILES_ARROW, strict=True)],
                                      schema=TASK_FILES_ARROW)  # fmt: skip


def commit_task_files(backend: TableBackend, tables: Mapping[str, TablePath],
                      rows: Iterable[Any], app_id: str, batch_id: int,
                      user_metadata: Mapping[str, str] | None = None) -> int:  # fmt: skip
    """Commit the files the batch's tasks wrote, one append per table (runs on the driver).

    Args:
        backend: a backend whose tasks write files (the tables must exist).
        tables: target name -> table.
        rows: the :data:`TASK_FILES_DDL` rows (Spark rows or mappings).
        app_id: the query's application id.
        batch_id: the micro-batch; a table that already holds it is left alone.
        user_metadata: target name -> its commit's ``userMetadata``.

    Returns:
        The rows committed, over all tables.
    """
    files: dict[str, list[DataFile]] = {target: [] for target in tables}
    for row in rows:
        files[row["target"]].append(DataFile(row["name"], row["size"], row["rows"]))
    with timed("delta_write"):
        for target, table in tables.items():
            backend.add_files(table, files[target], app_id, batch_id,
                              (user_metadata or {}).get(target))  # fmt: skip
    committed = sum(f.rows for table_files in files.values() for f in table_files)
    logger.debug("%s batch %d: %d files, %d rows", app_id, batch_id,
                 sum(map(len, files.values())), committed)  # fmt: skip
    return committed


def streaming_batch_id() -> int:
    """The micro-batch a streaming query's task is computing (in a Spark task only).

    Spark hands every task of a micro-batch the batch id as a local property, so a
    step inside the streaming plan can name its files as the sink would.
    """
    from pyspark import TaskContext

    context = TaskContext.get()
    batch = context.getLocalProperty(_BATCH_ID_PROPERTY) if context is not None else None
    if batch is None:
        raise RuntimeError("streaming_batch_id needs a task of a streaming query's micro-batch")
    return int(batch)


@dataclass(frozen=True)
class TaskLanding:
    """Writes a streaming step's output tables from inside its tasks (delta-rs).

    Picklable: a step of the query calls it with its rows per target, the
    micro-batch and a part number unique within it (a splitter, a worker); the
    driver commits the returned file rows in the query's ``foreachBatch``.

    Attributes:
        storage: where the tables are.
        tables: target name -> table URI.
        app_id: the query's application id (it names the files).
    """

    storage: Storage
    tables: Mapping[str, str]
    app_id: str

    def __call__(self, outputs: Mapping[str, pa.Table], batch_id: int,
                 part: int) -> pa.RecordBatch:  # fmt: skip
        """Write each non-empty output; one :data:`TASK_FILES_DDL` row per file."""
        name = task_file_name(self.app_id, batch_id, part)
        return write_task_files(self.storage, {target: (self.tables[target], rows)
                                               for target, rows in outputs.items()}, name)  # fmt: skip
