"""Bronze's Spark glue: Kafka rows as received, tagged with the run.

Two ways in, the same table: :func:`raw_events` turns any Kafka-schema stream
into bronze rows for a ``foreachBatch`` writer; :func:`landed_raw_events` and
:func:`landing_batch_writer` land a topic straight to Parquet with the
delta-rs backend (see :mod:`bronze.landing`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeGuard

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from bronze.landing import LANDING_TARGET, BronzeLandingSource
from bronze.schemas import RAW_EVENTS_ARROW, RAW_EVENTS_COLUMNS
from core.kafka.admin import BrokerError, topic_exists
from core.profiling import timed
from core.spark.input_rows import observe_input_rows
from core.spark.sources import bind_source
from core.storage import Storage
from core.tables.delta_rs import DeltaRsBackend
from core.tables.sink import BatchWriter, written_everywhere
from core.tables.task_files import commit_task_files

if TYPE_CHECKING:
    from core.kafka.source import KafkaTopic
    from core.tables.base import TableBackend, TablePath

__all__ = ["can_land", "landed_raw_events", "landing_batch_writer", "raw_events"]

def raw_events(kafka_rows: DataFrame, run_id: str) -> DataFrame:
    """Kafka-schema rows (key, value, topic, partition, offset, timestamp) -> bronze rows.

    Payloads are kept byte-exact; nothing is parsed here, so nothing is lost.
    """
    return kafka_rows.withColumn("run_id", F.lit(run_id)).select(*RAW_EVENTS_COLUMNS)


def can_land(backend: TableBackend) -> TypeGuard[DeltaRsBackend]:
    """Whether bronze can land Kafka ranges as files: with delta-rs, which commits them."""
    return isinstance(backend, DeltaRsBackend)


def landed_raw_events(spark: SparkSession, topic: KafkaTopic, backend: DeltaRsBackend,
                      storage: Storage, table: TablePath, run_id: str) -> DataFrame:  # fmt: skip
    """A stream of the files that bronze tasks land from ``topic`` into ``table``.

    Creates the table first (the tasks write into its folder).

    Raises:
        BrokerError: the topic does not exist (asked on the driver, so the message
            is not buried in a failed query's trace).
    """
    if not topic_exists(topic.client, topic.topic):
        raise BrokerError(f"topic {topic.topic!r} does not exist on {topic.client.bootstrap}")
    backend.create_if_missing(table, RAW_EVENTS_ARROW)
    source = bind_source(spark, BronzeLandingSource, client=topic.client, storage=storage)
    reader = spark.readStream.format(source).options(**topic.options())
    files = reader.option("path", str(table)).option("run_id", run_id).load()
    return observe_input_rows(files, "rows")  # Spark counts files; profiles want messages


def landing_batch_writer(backend: DeltaRsBackend, table: TablePath, app_id: str) -> BatchWriter:
    """The ``foreachBatch`` function that commits a micro-batch's landed files."""

    def write_batch(df: DataFrame, batch_id: int) -> None:
        if written_everywhere(backend, [table], app_id, batch_id):
            return  # a replay of a committed batch: its tasks never run
        with timed("collect"):  # the Kafka reads and the Parquet writes happen here
            files = df.collect()
        commit_task_files(backend, {LANDING_TARGET: table}, files, app_id, batch_id)

    return write_batch
