"""Bronze's stage: a Kafka topic (or any stream with Kafka's columns) -> ``bronze.raw_events``."""

from __future__ import annotations

import functools

from bronze.schemas import RAW_EVENTS
from bronze.stream import raw_events
from core.kafka.source import KafkaTopic
from core.stages import RunContext, Stage, StageDef
from core.tables.sink import foreach_batch_writer, recorded_anywhere

__all__ = ["BRONZE"]


def _build(run: RunContext) -> Stage:
    table = run.warehouse.table_uri(*RAW_EVENTS)
    app_id, checkpoint = run.plan.query_id("bronze"), run.checkpoint("bronze")
    rows = run.source.rows(run.spark) if isinstance(run.source, KafkaTopic) else run.source
    writer = foreach_batch_writer(run.backend, table, app_id)
    return Stage("bronze", raw_events(rows, run.plan.run_id), writer, checkpoint,
                 recorded=functools.partial(recorded_anywhere, run.backend, [table], app_id))


BRONZE = StageDef("bronze", RAW_EVENTS, _build)
"""Lands every message as received, tagged with the run (as rows, through the driver or
delta-spark; see :attr:`~core.stages.RunContext.landed_topic` for the tasks' own landing)."""
