"""The plain Spark peer: ``groupBy(window(event_time, "60 seconds"), key).count()`` into Delta.

The job a Spark user writes without groupings: the same Kafka source as the
pipeline (the project's Python data source; Spark's Kafka connector jar is not
available here), the JSON parsed with ``from_json``, one streaming aggregation in
update mode, and each micro-batch's changed counts upserted into a Delta table
(delta-rs from ``foreachBatch``, the project's table I/O): Databricks' "upsert
from streaming queries" pattern.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from core.kafka.source import KafkaTopic, read_kafka_stream
from core.tables import DeltaRsBackend, foreach_batch_writer

__all__ = ["count_windows"]

_MESSAGE = "key string, count long, timestamp long"


def count_windows(spark: SparkSession, topic: KafkaTopic, table: Path, checkpoint: Path,
                  timeout_s: float) -> pd.DataFrame:  # fmt: skip
    """Count what ``topic`` holds now per key and 60 s window into the Delta table at ``table``.

    Returns:
        The table: ``window_start_ms``, ``key``, ``count``.

    Raises:
        TimeoutError: the query had not finished after ``timeout_s`` (it is stopped).
    """
    messages = read_kafka_stream(spark, topic).select(
        F.from_json(F.col("value").cast("string"), _MESSAGE).alias("m")
    )
    events = messages.select("m.key", F.timestamp_millis("m.timestamp").alias("event_time"))
    counts = (
        events.groupBy(F.window("event_time", "60 seconds"), "key")
        .count()
        .select(F.unix_millis("window.start").alias("window_start_ms"), "key", "count")
    )
    writer = foreach_batch_writer(
        DeltaRsBackend(), table, "peer-spark", mode="merge", keys=["window_start_ms", "key"]
    )
    query = (counts.writeStream.outputMode("update").foreachBatch(writer)
             .option("checkpointLocation", str(checkpoint)).trigger(availableNow=True).start())  # fmt: skip
    if not query.awaitTermination(timeout_s):
        query.stop()
        raise TimeoutError(f"the Spark peer had not finished after {timeout_s:.0f} s")
    return DeltaRsBackend().read(table).to_pandas()
