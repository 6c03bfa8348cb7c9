"""The workers' query: routed tuples -> ``silver.worker_windows`` and ``silver.worker_latency``.

``groupBy(worker).applyInPandasWithState`` runs :func:`silver.workers.serve_worker_blocks`
over each worker's new tuples; every micro-batch appends the workers' partials,
tagged with the batch id, so a (window, worker, key) has one row per micro-batch
that saw it and readers add them up (gold does). Windows are updated as tuples
arrive (no watermark wait), so a finite run never leaves a window behind. With
delta-rs the tasks write the partials' files and the driver commits their names
(:mod:`core.tables.task_files`); with delta-spark the executors append natively.
Either way both tables record the batch id, so a replayed batch is skipped.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pyarrow as pa
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import from_arrow_schema
from pyspark.sql.streaming.state import GroupStateTimeout

from core.storage import Storage
from core.tables.base import TableBackend, TablePath
from core.tables.delta_rs import DeltaRsBackend
from core.tables.sink import BatchWriter, written_everywhere
from core.tables.task_files import task_file_name, task_files_writer, write_task_files
from silver.blocks import unpack
from silver.workers import (
    LATENCY_ARROW,
    QUEUE_STATE_DDL,
    WINDOW_PARTIALS_ARROW,
    WORKER_OUTPUT_DDL,
    serve_worker_blocks,
)

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = ["WORKER_LATENCY_ARROW", "WORKER_WINDOWS_ARROW", "WorkerTables", "serve_workers",
           "worker_tables_writer"]  # fmt: skip


def _tagged(schema: pa.Schema) -> pa.Schema:
    return pa.schema([pa.field("run_id", pa.string()), pa.field("batch_id", pa.int64()), *schema])


WORKER_WINDOWS_ARROW = _tagged(WINDOW_PARTIALS_ARROW)
WORKER_LATENCY_ARROW = _tagged(LATENCY_ARROW)
_SCHEMAS = {"latency": (LATENCY_ARROW, WORKER_LATENCY_ARROW),
            "windows": (WINDOW_PARTIALS_ARROW, WORKER_WINDOWS_ARROW)}  # fmt: skip


@dataclass(frozen=True)
class WorkerTables:
    """Where the workers' partials go (table URIs)."""

    windows: str
    latency: str

    def by_target(self) -> dict[str, str]:
        """Target name (the worker step's output kind) -> table, in commit order.

        ``worker_windows`` is committed last: a reader that sees a batch there
        finds the batch's latencies too.
        """
        return {"latency": self.latency, "windows": self.windows}


def serve_workers(blocks: DataFrame, window_ms: int, process_ms: float, speed: float) -> DataFrame:
    """``groupBy(worker_group).applyInPandasWithState``: each worker counts and queues its tuples.

    ``blocks``: ``WORKER_BLOCKS_DDL`` rows. Returns ``WORKER_OUTPUT_DDL`` rows.
    """
    serve = functools.partial(serve_worker_blocks, window_ms=window_ms, process_ms=process_ms,
                              speed=speed)  # fmt: skip
    return blocks.groupBy("worker_group").applyInPandasWithState(
        serve, WORKER_OUTPUT_DDL, QUEUE_STATE_DDL, "append", GroupStateTimeout.NoTimeout
    )


def _partials(batches: Iterator[pa.RecordBatch], run_id: str,
              batch_id: int) -> dict[str, pa.Table]:  # fmt: skip
    blocks: dict[str, list[bytes]] = {kind: [] for kind in _SCHEMAS}
    for batch in batches:
        for kind, block in zip(batch.column("kind").to_pylist(), batch.column("block").to_pylist(),
                               strict=True):  # fmt: skip
            blocks[kind].append(block)
    out = {}
    for kind, (schema, tagged) in _SCHEMAS.items():
        rows = unpack(blocks[kind], schema)
        tags = [pa.repeat(pa.scalar(run_id, pa.string()), rows.num_rows),
                pa.repeat(pa.scalar(batch_id, pa.int64()), rows.num_rows)]  # fmt: skip
        out[kind] = pa.Table.from_arrays([*tags, *rows.columns], schema=tagged)
    return out


def _write_partial_files(batches: Iterator[pa.RecordBatch], storage: Storage,
                         tables: Mapping[str, str], run_id: str, app_id: str,
                         batch_id: int) -> Iterator[pa.RecordBatch]:  # fmt: skip
    parts = _partials(batches, run_id, batch_id)
    outputs = {kind: (tables[kind], parts[kind]) for kind in tables}
    yield write_task_files(storage, outputs, task_file_name(app_id, batch_id))


def _partial_rows(batches: Iterator[pa.RecordBatch], kind: str, run_id: str,
                  batch_id: int) -> Iterator[pa.RecordBatch]:  # fmt: skip
    yield from _partials(batches, run_id, batch_id)[kind].to_batches()


def worker_tables_writer(backend: TableBackend, storage: Storage, tables: WorkerTables,
                         run_id: str, app_id: str) -> BatchWriter:  # fmt: skip
    """The ``foreachBatch`` function of the workers' query (``WORKER_OUTPUT_DDL`` rows)."""
    paths: dict[str, TablePath] = dict(tables.by_target())
    if isinstance(backend, DeltaRsBackend):
        for kind, (_, schema) in _SCHEMAS.items():
            backend.create_if_missing(paths[kind], schema)

    def write_natively(df: DataFrame, batch_id: int) -> None:
        if written_everywhere(backend, list(paths.values()), app_id, batch_id):
            return
        packed = df.persist()
        try:
            for kind, (_, tagged) in _SCHEMAS.items():
                rows = packed.where(F.col("kind") == kind).mapInArrow(
                    functools.partial(_partial_rows, kind=kind, run_id=run_id, batch_id=batch_id),
                    from_arrow_schema(tagged))  # fmt: skip
                backend.append(paths[kind], rows, app_id, batch_id)
        finally:
            packed.unpersist()

    if isinstance(backend, DeltaRsBackend):
        write = functools.partial(_write_partial_files, storage=storage, tables=paths,
                                  run_id=run_id, app_id=app_id)  # fmt: skip
        return task_files_writer(backend, paths, app_id, write)
    return write_natively
