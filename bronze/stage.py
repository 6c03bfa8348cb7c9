"""Bronze's stage: a Kafka topic (or any stream with Kafka's columns) -> ``bronze.raw_events``."""

from __future__ import annotations

from dataclasses import replace

from bronze.stream import can_land, landed_raw_events, landing_batch_writer, raw_events
from core.kafka.source import KafkaTopic
from core.spark.stages import RunContext, Stage, StageDef
from core.tables.sink import foreach_batch_writer

__all__ = ["BRONZE"]


def _build(run: RunContext) -> Stage:
    table = run.warehouse.table_uri("bronze", "raw_events")
    app_id, checkpoint = f"{run.spec.run_id}-bronze", run.checkpoint("bronze")
    source = run.source
    if isinstance(source, KafkaTopic) and source.min_partitions is None:
        # Two similar tasks per core, however skewed the topic's partitions are.
        source = replace(source, min_partitions=2 * run.spark.sparkContext.defaultParallelism)
    if isinstance(source, KafkaTopic) and can_land(run.backend):
        # Tasks write the messages to Parquet themselves; only file names reach the driver.
        files = landed_raw_events(run.spark, source, run.backend, run.warehouse.storage, table,
                                  run.spec.run_id)  # fmt: skip
        return Stage("bronze", files, landing_batch_writer(run.backend, table, app_id), checkpoint)
    rows = source.rows(run.spark) if isinstance(source, KafkaTopic) else source
    writer = foreach_batch_writer(run.backend, table, app_id)
    return Stage("bronze", raw_events(rows, run.spec.run_id), writer, checkpoint)


BRONZE = StageDef("bronze", ("bronze", "raw_events"), _build)
"""Lands every message as received, tagged with the run."""
