"""Bronze landing: each Kafka range is written to Parquet by the task that reads it.

On the row path, every message crosses from the Kafka reader into Spark rows,
back into Arrow for ``toArrow()``, and travels to the driver, where delta-rs
writes it: most of bronze's CPU went to those conversions. With the delta-rs
backend, bronze reads ``format("dkg_bronze_landing")`` instead. It plans the
same offset ranges as ``dkg_kafka`` (same offsets, same checkpoint), but each
task writes its range to one Parquet file in the table's folder and hands Spark a single row naming that file. The query's
``foreachBatch`` commits the files of a micro-batch in one Delta transaction
that records the batch id (see :mod:`bronze.stream`).

Exactly once: a file becomes part of the table only through that commit. File
names follow from (run, partition, start, end), so a replayed micro-batch
rewrites the same files with the same bytes (see
:meth:`core.storage.Storage.parquet_writer`), and a batch that is already
committed is skipped before any task runs.

Options: those of ``dkg_kafka``, plus ``path`` (the bronze table's URI) and
``run_id`` (the value of the ``run_id`` column).
"""

from __future__ import annotations

import hashlib
import itertools
import re
from collections.abc import Iterator
from typing import ClassVar

import pyarrow as pa
from pyspark.sql.datasource import DataSourceStreamReader, InputPartition
from pyspark.sql.types import StructType

from bronze.schemas import RAW_EVENTS_ARROW
from core.kafka.admin import BrokerError
from core.kafka.client import KafkaClient
from core.kafka.source import KafkaRange, KafkaSource, KafkaStreamReader, read_range
from core.storage import LOCAL_FILES, Storage
from core.tables.delta_rs import DataFile
from core.tables.task_files import TASK_FILES_DDL

__all__ = ["LANDING_FORMAT", "LANDING_TARGET", "BronzeLandingSource", "land_range"]

LANDING_FORMAT = "dkg_bronze_landing"
LANDING_TARGET = "raw_events"
"""The landed files' ``target`` (:data:`core.tables.task_files.TASK_FILES_DDL`)."""


def _file_name(run_id: str, task: KafkaRange) -> str:
    # Readable, and unique per run even when two run ids sanitize alike.
    tag = re.sub(r"[^A-Za-z0-9_.-]+", "_", run_id)[:80]
    digest = hashlib.sha256(f"{run_id}\0{task.topic}".encode()).hexdigest()[:8]
    return f"bronze-{tag}-{digest}-p{task.partition}-{task.start}-{task.end}.snappy.parquet"


def _bronze_batch(kafka: pa.RecordBatch, run_id: str) -> pa.RecordBatch:
    columns = {name: kafka.column(name) for name in RAW_EVENTS_ARROW.names if name != "run_id"}
    columns["run_id"] = pa.array([run_id] * kafka.num_rows, pa.string())
    return pa.RecordBatch.from_arrays([columns[name] for name in RAW_EVENTS_ARROW.names],
                                      schema=RAW_EVENTS_ARROW)  # fmt: skip


def land_range(task: KafkaRange, client: KafkaClient, storage: Storage, table: str,
               run_id: str) -> DataFile | None:  # fmt: skip
    """Read offsets ``[start, end)`` of one partition into one Parquet file in ``table``.

    Returns:
        The file (not yet committed), or None when the range held no messages.
    """
    name, rows = _file_name(run_id, task), 0
    batches = read_range(task, client)
    first = next(batches, None)
    if first is None:
        return None
    with storage.parquet_writer(table, name, RAW_EVENTS_ARROW) as writer:
        for batch in itertools.chain([first], batches):
            writer.write_batch(_bronze_batch(batch, run_id))
            rows += batch.num_rows
    return DataFile(name, storage.size(f"{table}/{name}"), rows)


class _LandingReader(KafkaStreamReader):
    """``dkg_kafka``'s planning; each task lands its range and yields one file row."""

    def __init__(self, options: dict[str, str], client: KafkaClient, storage: Storage) -> None:
        """Kafka options plus the table's URI and the run id."""
        super().__init__(options, client)
        self.storage = storage
        lowered = {k.lower(): v for k, v in options.items()}
        try:
            self.table, self.run_id = lowered["path"], lowered["run_id"]
        except KeyError as exc:
            raise BrokerError(
                f"the {LANDING_FORMAT} source needs the option {exc.args[0]!r}"
            ) from None

    def read(self, partition: InputPartition) -> Iterator[tuple[str, str, int, int]]:  # type: ignore[override]
        """Land the range (runs on executors); one ``TASK_FILES_DDL`` row."""
        assert isinstance(partition, KafkaRange)  # noqa: S101 - Spark contract
        landed = land_range(partition, self.client, self.storage, self.table, self.run_id)
        if landed is not None:
            yield LANDING_TARGET, landed.name, landed.size, landed.rows


class BronzeLandingSource(KafkaSource):
    """``format("dkg_bronze_landing")``: a Kafka topic landed as bronze Parquet files.

    Bound to a Kafka client and the table's storage (:func:`core.spark.sources.bind_source`).
    """

    storage: ClassVar[Storage] = LOCAL_FILES

    @classmethod
    def name(cls) -> str:
        """The format name."""
        return LANDING_FORMAT

    def schema(self) -> str:
        """One row per landed file."""
        return TASK_FILES_DDL

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        """The micro-batch reader."""
        if self.client is None:
            raise BrokerError(f"{LANDING_FORMAT} has no connection: bind it to a Kafka client")
        return _LandingReader(dict(self.options), self.client, self.storage)
