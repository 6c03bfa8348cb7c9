"""Data files written by Spark tasks and committed by the driver: no rows cross to the driver.

A micro-batch's tasks write their share of each output table as Parquet in the
table's folder and hand Spark one row per file (:data:`TASK_FILES_DDL`); the
query's ``foreachBatch`` collects those rows and commits each table's files in
one Delta append that records the batch id (:meth:`DeltaRsBackend.add_files`).
A file that no commit names is never read, so a task retried or a batch
replayed after a crash only rewrites files: names follow from the application
id, the batch id and the task's partition, and the plans are deterministic.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from core.profiling import timed
from core.storage import Storage
from core.tables.base import TablePath
from core.tables.delta_rs import DataFile, DeltaRsBackend
from core.tables.sink import BatchWriter, written_everywhere

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = ["TASK_FILES_ARROW", "TASK_FILES_DDL", "commit_task_files", "task_file_name",
           "task_files_writer", "write_task_files"]  # fmt: skip

logger = logging.getLogger(__name__)

TASK_FILES_DDL = "target STRING, name STRING, size LONG, rows LONG"
"""One row per written file: which output table (a caller's name), file name, bytes, rows."""
TASK_FILES_ARROW = pa.schema([("target", pa.string()), ("name", pa.string()),
                              ("size", pa.int64()), ("rows", pa.int64())])  # fmt: skip


def task_file_name(app_id: str, batch_id: int, part: int | None = None) -> str:
    """The file name of this task's output for ``batch_id`` (same in every table's folder).

    ``part``: the task's partition; None asks Spark's ``TaskContext`` (in a task).
    """
    if part is None:
        from pyspark import TaskContext

        context = TaskContext.get()
        if context is None:
            raise RuntimeError("task_file_name needs a partition outside a Spark task")
        part = context.partitionId()
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


def commit_task_files(backend: DeltaRsBackend, tables: Mapping[str, TablePath],
                      rows: Iterable[Any], app_id: str, batch_id: int) -> int:  # fmt: skip
    """Commit the files the batch's tasks wrote, one append per table (runs on the driver).

    Args:
        backend: the delta-rs backend (the tables must exist).
        tables: target name -> table.
        rows: the collected :data:`TASK_FILES_DDL` rows.
        app_id: the query's application id.
        batch_id: the micro-batch; a table that already holds it is left alone.

    Returns:
        The rows committed, over all tables.
    """
    files: dict[str, list[DataFile]] = {target: [] for target in tables}
    for row in rows:
        files[row.target].append(DataFile(row.name, row.size, row.rows))
    with timed("delta_write"):
        for target, table in tables.items():
            backend.add_files(table, files[target], app_id, batch_id)
    committed = sum(f.rows for table_files in files.values() for f in table_files)
    logger.debug("%s batch %d: %d files, %d rows", app_id, batch_id,
                 sum(map(len, files.values())), committed)  # fmt: skip
    return committed


TaskWriter = Callable[..., Iterator[pa.RecordBatch]]
"""``mapInArrow`` function called with ``batch_id=``: writes a task's files, yields their rows."""


def task_files_writer(backend: DeltaRsBackend, tables: Mapping[str, TablePath], app_id: str,
                      write_task: TaskWriter) -> BatchWriter:  # fmt: skip
    """The ``foreachBatch`` function of a query whose tasks write its tables' files.

    A batch that every table already holds is skipped before its tasks run;
    otherwise ``write_task`` runs in the tasks and the driver commits the files.
    """

    from pyspark.sql.pandas.types import from_arrow_schema

    schema = from_arrow_schema(TASK_FILES_ARROW)  # not the DDL text: Spark would parse it per batch

    def write_batch(df: DataFrame, batch_id: int) -> None:
        if written_everywhere(backend, list(tables.values()), app_id, batch_id):
            return  # a replay of a batch already in every table
        write = functools.partial(write_task, batch_id=batch_id)
        with timed("collect"):  # the whole plan runs in the tasks; file names come back
            files = df.mapInArrow(write, schema).collect()
        commit_task_files(backend, tables, files, app_id, batch_id)

    return write_batch
