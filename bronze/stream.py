"""Bronze's Spark glue: Kafka rows as received, tagged with the run.

:func:`raw_events` turns any Kafka-schema stream into bronze rows for a
``foreachBatch`` writer. With the delta-rs backend, the tasks that read a topic
land it straight to Parquet instead (see :mod:`bronze.landing`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeGuard

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from bronze.schemas import RAW_EVENTS_COLUMNS
from core.tables.delta_rs import DeltaRsBackend

if TYPE_CHECKING:
    from core.tables.base import TableBackend

__all__ = ["can_land", "raw_events"]


def raw_events(kafka_rows: DataFrame, run_id: str) -> DataFrame:
    """Kafka-schema rows (key, value, topic, partition, offset, timestamp) -> bronze rows.

    Payloads are kept byte-exact; nothing is parsed here, so nothing is lost.
    """
    return kafka_rows.withColumn("run_id", F.lit(run_id)).select(*RAW_EVENTS_COLUMNS)


def can_land(backend: TableBackend) -> TypeGuard[DeltaRsBackend]:
    """Whether Kafka ranges can be landed as files: with delta-rs, which commits them."""
    return isinstance(backend, DeltaRsBackend)
