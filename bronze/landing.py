"""Bronze landing: each Kafka range is written to Parquet by the task that reads it.

On the row path, every message crosses from the Kafka reader into Spark rows,
back into Arrow for ``toArrow()``, and travels to the driver, where delta-rs
writes it: most of bronze's CPU went to those conversions. With the delta-rs
backend, the task that reads a Kafka range (silver's ``dkg_kafka_blocks``
source, :mod:`silver.kafka_blocks`) writes it to one Parquet file in bronze's
folder; the query's ``foreachBatch`` commits the files of a micro-batch in one
Delta transaction that records the batch id.

Exactly once: a file becomes part of the table only through that commit. File
names follow from (run, partition, start, end), so a replayed micro-batch
rewrites the same files with the same bytes (see
:meth:`core.storage.Storage.parquet_writer`).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator

import pyarrow as pa

from bronze.schemas import RAW_EVENTS, RAW_EVENTS_ARROW
from core.kafka.client import KafkaClient
from core.kafka.source import KafkaRange, read_range
from core.storage import Storage
from core.tables.base import DataFile

__all__ = ["LANDING_TARGET", "bronze_batches", "write_landed"]

LANDING_TARGET = RAW_EVENTS[1]
"""The landed files' ``target`` (:data:`core.tables.task_files.TASK_FILES_DDL`)."""


def _file_name(run_id: str, kafka_range: KafkaRange) -> str:
    # Readable, and unique per run even when two run ids sanitize alike.
    tag = re.sub(r"[^A-Za-z0-9_.-]+", "_", run_id)[:80]
    digest = hashlib.sha256(f"{run_id}\0{kafka_range.topic}".encode()).hexdigest()[:8]
    where = f"p{kafka_range.partition}-{kafka_range.start}-{kafka_range.end}"
    return f"bronze-{tag}-{digest}-{where}.snappy.parquet"


def _bronze_batch(kafka: pa.RecordBatch, run_id: str) -> pa.RecordBatch:
    columns = {name: kafka.column(name) for name in RAW_EVENTS_ARROW.names if name != "run_id"}
    columns["run_id"] = pa.array([run_id] * kafka.num_rows, pa.string())
    return pa.RecordBatch.from_arrays([columns[name] for name in RAW_EVENTS_ARROW.names],
                                      schema=RAW_EVENTS_ARROW)  # fmt: skip


def bronze_batches(kafka_range: KafkaRange, client: KafkaClient, run_id: str
                   ) -> Iterator[pa.RecordBatch]:  # fmt: skip
    """Offsets ``[start, end)`` of one partition as bronze rows (``RAW_EVENTS_ARROW``)."""
    for batch in read_range(kafka_range, client):
        yield _bronze_batch(batch, run_id)


def write_landed(kafka_range: KafkaRange, rows: pa.Table, storage: Storage, table: str,
                 run_id: str) -> DataFile | None:  # fmt: skip
    """Write a range's bronze rows (:func:`bronze_batches`, ``RAW_EVENTS_ARROW``) to its one
    Parquet file in ``table``.

    Returns:
        The file (not yet committed), or None when the range held no messages.
    """
    if not rows.num_rows:
        return None
    # One chunk: the file's bytes follow from the rows alone, not from how Kafka's
    # polls happened to split them, so a replay that rewrites a committed file
    # leaves the size its commit recorded.
    name = _file_name(run_id, kafka_range)
    return DataFile(name, storage.write_parquet(table, name, rows.combine_chunks()), rows.num_rows)
