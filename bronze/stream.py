"""Bronze's Spark glue: Kafka rows as received, tagged with the run.

:func:`raw_events` turns any Kafka-schema stream into bronze rows for a
``foreachBatch`` writer. With the delta-rs backend, the tasks that read a topic
land it straight to Parquet instead (see :mod:`bronze.landing`).
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from bronze.schemas import RAW_EVENTS_COLUMNS

__all__ = ["raw_events"]


def raw_events(kafka_rows: DataFrame, run_id: str) -> DataFrame:
    """Kafka-schema rows (key, value, topic, partition, offset, timestamp) -> bronze rows.

    Payloads are kept byte-exact; nothing is parsed here, so nothing is lost.
    """
    return kafka_rows.withColumn("run_id", F.lit(run_id)).select(*RAW_EVENTS_COLUMNS)
