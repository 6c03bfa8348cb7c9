"""Silver's micro-batch writer: the workers serve the batch, then five tables take it, exactly once.

The silver query's streaming plan routes (``silver.stream.route_blocks``); its
``foreachBatch`` serves the routed tuples in the workers' queues
(``silver.stream.serve_workers``) and commits, in this order,
``bronze.raw_events`` (when the query read Kafka itself), ``silver.routed``, ``silver.quarantine``, ``silver.routing_snapshots``,
``silver.worker_latency`` and ``silver.worker_windows`` (gold watches it: a reader
that sees a batch there finds it in every table gold reads), whose commit also
records the workers' queues (:mod:`silver.worker_queues`). With delta-rs the routing and the workers' tasks wrote
the tables' files themselves (:class:`core.tables.task_files.TaskLanding`) and
the driver commits only their names; with delta-spark the rows arrive packed
and are appended natively, by the executors too. Each table records the batch
id under the query's application id, so a batch replayed after a crash
between two commits completes the missing ones only.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pyarrow as pa
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import from_arrow_schema

from bronze.landing import LANDING_TARGET
from core.profiling import timed
from core.spark.foreach_batch import BatchWriter
from core.storage import Storage
from core.tables.base import TableBackend
from core.tables.sink import written_everywhere
from core.tables.task_files import TASK_FILES_ARROW, TaskLanding, commit_task_files
from silver.blocks import FILES, ROUTED, unpack
from silver.schemas import ROUTED_ARROW, ROUTING_TARGETS
from silver.stream import serve_workers
from silver.worker_queues import WorkerQueues, queues_metadata
from silver.workers import (
    BUSY,
    PARTIAL_TARGETS,
    QUEUE,
    QUEUE_ARROW,
    WORKER_BUSY_ARROW,
    WorkerServing,
)

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = ["SilverTables", "silver_batch_writer"]


@dataclass(frozen=True)
class SilverTables:
    """Where the silver query's output goes (table URIs).

    ``bronze``: set when the query reads Kafka and its read tasks land bronze's
    files (:mod:`silver.kafka_blocks`); the writer commits them first. ``busy``:
    set in physical mode, where the workers report their busy time.
    """

    routed: str
    quarantine: str
    snapshots: str
    latency: str
    windows: str
    bronze: str | None = None
    busy: str | None = None

    def partial_schemas(self) -> dict[str, pa.Schema]:
        """The workers' targets and their tables' schemas, ``windows`` last (gold watches it)."""
        busy = {BUSY: WORKER_BUSY_ARROW} if self.busy is not None else {}
        return {**busy, **PARTIAL_TARGETS}

    def routing_landing(self, storage: Storage, app_id: str) -> TaskLanding:
        """Where the routing step's tasks write their tables' files."""
        return TaskLanding(storage, {t: getattr(self, t) for t in ROUTING_TARGETS}, app_id)

    def partials_landing(self, storage: Storage, app_id: str) -> TaskLanding:
        """Where the workers' tasks write their partials' files."""
        return TaskLanding(storage, {t: getattr(self, t) for t in self.partial_schemas()}, app_id)

    def files_tables(self) -> dict[str, str]:
        """The tables whose files the tasks write (target -> table), in commit order."""
        landed = {LANDING_TARGET: self.bronze} if self.bronze is not None else {}
        targets = (*ROUTING_TARGETS, *self.partial_schemas())
        return {**landed, **{t: getattr(self, t) for t in targets}}

    def schemas(self) -> dict[str, pa.Schema]:
        """Every silver target the query writes and its table's schema."""
        return {**{t: schema for t, (_, schema) in ROUTING_TARGETS.items()},
                **self.partial_schemas()}  # fmt: skip


def _unpacked(batches: Iterator[pa.RecordBatch], schema: pa.Schema) -> Iterator[pa.RecordBatch]:
    for batch in batches:
        if batch.num_rows:
            yield from unpack(batch.column("block").to_pylist(), schema).to_batches()


def silver_batch_writer(backend: TableBackend, storage: Storage, tables: SilverTables, app_id: str,
                        serving: WorkerServing) -> BatchWriter:  # fmt: skip
    """The ``foreachBatch`` function of the silver query (``ROUTED_BLOCKS_DDL`` rows).

    With delta-rs, the query's routing and ``serving`` must land their files
    (their ``landing``, with this ``app_id``); otherwise they pass rows on, packed.
    """
    tables_in_order = list(tables.files_tables().values())
    queues = WorkerQueues(backend, storage, tables.windows, app_id)
    if backend.commits_task_files:
        for target, schema in tables.schemas().items():
            backend.create_if_missing(getattr(tables, target), schema)

    def commit_files(df: DataFrame, batch_id: int) -> None:
        if written_everywhere(backend, tables_in_order, app_id, batch_id):
            return  # a replay of a batch already in every table
        served = serve_workers(df, serving, queues.before(batch_id), batch_id)
        with timed("collect"):  # the whole plan runs in the tasks; file names come back
            rows = served.collect()
        packed = {kind: [row["block"] for row in rows if row["kind"] == kind] for kind in (FILES, QUEUE)}
        after = queues.after(batch_id, unpack(packed[QUEUE], QUEUE_ARROW))
        commit_task_files(backend, tables.files_tables(),
                          unpack(packed[FILES], TASK_FILES_ARROW).to_pylist(), app_id, batch_id,
                          {"windows": queues_metadata(after)})  # fmt: skip
        queues.remember(batch_id, after)

    def write_natively(df: DataFrame, batch_id: int) -> None:
        if written_everywhere(backend, tables_in_order, app_id, batch_id):
            return
        packed = serve_workers(df, serving, queues.before(batch_id), batch_id).persist()
        try:
            rows = packed.where(F.col("kind") == ROUTED).mapInArrow(
                functools.partial(_unpacked, schema=ROUTED_ARROW), from_arrow_schema(ROUTED_ARROW))
            for target, (kind, schema) in ROUTING_TARGETS.items():
                part = rows.where(F.col("record") == kind)
                if target == "snapshots":
                    part = part.withColumnRenamed("payload", "state")
                backend.append(getattr(tables, target), part.select(*schema.names), app_id, batch_id)
            served = [row["block"] for row in packed.where(F.col("kind") == QUEUE).collect()]
            after = queues.after(batch_id, unpack(served, QUEUE_ARROW))
            for target, schema in tables.partial_schemas().items():  # worker_windows last
                partials = packed.where(F.col("kind") == target).mapInArrow(
                    functools.partial(_unpacked, schema=schema), from_arrow_schema(schema))
                backend.append(getattr(tables, target), partials, app_id, batch_id,
                               user_metadata=queues_metadata(after) if target == "windows" else None)  # fmt: skip
            queues.remember(batch_id, after)
        finally:
            packed.unpersist()

    return commit_files if backend.commits_task_files else write_natively
