"""The join's micro-batch writer: silver.joined, silver.join_rejects, silver.join_state.

The join's tasks write the tables' files themselves with delta-rs
(:class:`core.tables.task_files.TaskLanding`) and the driver commits only
their names; with another backend the rows arrive packed and the driver
appends them. Each table records the batch id under the query's application
id, so a batch replayed after a crash writes only what is missing.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING

from core.profiling import timed
from core.spark.foreach_batch import BatchWriter
from core.tables.base import TableBackend, TablePath
from core.tables.sink import written_everywhere
from core.tables.task_files import TASK_FILES_ARROW, commit_task_files
from silver.blocks import FILES, unpack
from silver.join.operator import JOIN_TABLES

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = ["join_batch_writer"]

logger = logging.getLogger(__name__)


def join_batch_writer(backend: TableBackend, tables: Mapping[str, TablePath],
                      app_id: str) -> BatchWriter:  # fmt: skip
    """The ``foreachBatch`` function of the join query (``JOIN_OUTPUT_DDL`` rows).

    Args:
        backend: the Delta backend; with delta-rs the query's join step must land
            its files (a :class:`~core.tables.task_files.TaskLanding` with this
            ``app_id``), otherwise pass its rows on, packed.
        tables: each table of :data:`silver.join.operator.JOIN_TABLES` by name.
        app_id: the query's application id.
    """
    paths = [tables[name] for name in JOIN_TABLES]
    landed = backend.commits_task_files
    if landed:
        for name, (_, schema) in JOIN_TABLES.items():
            backend.create_if_missing(tables[name], schema)

    def write_batch(df: DataFrame, batch_id: int) -> None:
        if written_everywhere(backend, paths, app_id, batch_id):
            return  # a replay of a batch already in every table
        with timed("collect"):  # the whole plan runs in the tasks; files or rows come back
            rows = df.collect()
        packed = {kind: [row["block"] for row in rows if row["kind"] == kind]
                  for kind in (FILES, *JOIN_TABLES)}  # fmt: skip
        if landed:
            files = unpack(packed[FILES], TASK_FILES_ARROW).to_pylist()
            written = commit_task_files(backend, tables, files, app_id, batch_id)
        else:
            written = 0
            for name, (_, schema) in JOIN_TABLES.items():
                part = unpack(packed[name], schema)
                backend.append(tables[name], part, app_id, batch_id)
                written += part.num_rows
        logger.info("join batch %d: %d rows written", batch_id, written)

    return write_batch
