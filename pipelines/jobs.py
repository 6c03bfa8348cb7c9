"""Connects the medallion's streaming queries: Kafka -> bronze -> silver -> gold.

Each arrow is its own streaming query with its own checkpoint under
``<warehouse>/_checkpoints/<run_id>-<query>``; every sink is idempotent per
micro-batch (Delta application transactions), so a run killed at any point and
started again with the same run id resumes without loss or double counting.
A finite run drains each stage in order (``availableNow``), then rebuilds gold.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.streaming import StreamingQuery

from bronze.stream import can_land, landed_raw_events, landing_batch_writer, raw_events
from core.kafka.source import KafkaTopic
from core.profiling import phase_totals
from core.spark.input_rows import input_rows
from core.spark.session import delta_spark_available
from core.tables import read_delta_stream
from core.tables.base import TableBackend
from core.tables.sink import foreach_batch_writer
from core.warehouse import Warehouse
from gold.refresh import GoldSettings, refresh_gold
from silver.sink import silver_batch_writer
from silver.stream import (
    BRONZE_INPUT,
    read_bronze_blocks,
    route_blocks,
    route_stream,
    splitter_group_keys,
)
from silver.windows import WINDOW_INPUT, worker_windows_writer
from silver.windows_source import read_window_partials

__all__ = [
    "STAGES",
    "RunSpec",
    "Stage",
    "StageTimes",
    "build_stage",
    "gold_settings",
    "run_finite",
    "stage_output",
]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class RunSpec:
    """One run: a source type through one grouping (names as in the seed).

    The windows, queue model and batch sizes are ``run.*`` settings (:class:`core.config.RunConfig`).
    """

    run_id: str
    source_type: str
    grouping: str
    workers: int
    splitters: int
    params: dict[str, Any] = field(default_factory=dict)
    worker_window_ms: int = 15_000
    aggregation_window_ms: int = 60_000
    process_ms: float = 1.0
    speed: float = 1.0
    silver_max_bytes_per_trigger: int = 48 << 20
    windows_max_files_per_trigger: int = 8


@dataclass
class StageTimes:
    """Where a run's time went.

    Attributes:
        seconds: wall-clock seconds per stage.
        profile: per streaming query, Spark's ``durationMs`` phases summed over its
            micro-batches (``addBatch`` is the foreachBatch: compute and write),
            ``batches``, ``rows`` (input rows), and the driver's share of
            ``addBatch`` as ``driver.<phase>`` (collect, aggregate, delta_write, ...).
    """

    seconds: dict[str, float] = field(default_factory=dict)
    profile: dict[str, dict[str, int]] = field(default_factory=dict)

    def add_progress(self, name: str, progress: Any) -> None:
        """Sum one micro-batch's ``StreamingQueryProgress`` into ``profile[name]``."""
        phases = self.profile.setdefault(name, {})
        for phase, ms in (progress.durationMs or {}).items():
            phases[phase] = phases.get(phase, 0) + int(ms)
        phases["batches"] = phases.get("batches", 0) + 1
        phases["rows"] = phases.get("rows", 0) + input_rows(progress)


def _drain(stage: Stage, times: StageTimes) -> None:
    name, started, phases_before = stage.name, time.monotonic(), phase_totals()
    query = start_query(stage, availableNow=True)
    query.awaitTermination()
    wall_s = time.monotonic() - started
    times.seconds[name] = times.seconds.get(name, 0.0) + wall_s
    progresses = query.recentProgress
    for progress in progresses:
        times.add_progress(name, progress)
    profile = times.profile.setdefault(name, {})
    in_batches = sum(int((p.durationMs or {}).get("triggerExecution", 0)) for p in progresses)
    # Starting the query (sources, state store, Python workers) and stopping it.
    profile["outside_batches"] = profile.get("outside_batches", 0) + int(1000 * wall_s) - in_batches
    for phase, seconds in phase_totals().items():
        spent_ms = int(1000 * (seconds - phases_before.get(phase, 0.0)))
        if spent_ms:
            profile[f"driver.{phase}"] = profile.get(f"driver.{phase}", 0) + spent_ms


@dataclass(frozen=True)
class Stage:
    """One streaming query of a run: what it reads, how it writes, where it checkpoints."""

    name: str
    frame: DataFrame
    writer: Any
    checkpoint: str
    shuffle_partitions: int | None = None  # None: the session's


def start_query(stage: Stage, **trigger: Any) -> StreamingQuery:
    """Start the stage's query with ``trigger`` (e.g. ``availableNow=True``).

    The shuffle partition count is fixed when a stateful query first starts (its
    checkpoint keeps it); a stage may ask for its own, set only for its start.
    """
    spark = stage.frame.sparkSession
    session_partitions = spark.conf.get(_SHUFFLE_PARTITIONS)
    if stage.shuffle_partitions:
        spark.conf.set(_SHUFFLE_PARTITIONS, str(stage.shuffle_partitions))
    try:
        return (stage.frame.writeStream.queryName(stage.name).foreachBatch(stage.writer)
                .option("checkpointLocation", stage.checkpoint).trigger(**trigger).start())  # fmt: skip
    finally:
        spark.conf.set(_SHUFFLE_PARTITIONS, session_partitions)


_SHUFFLE_PARTITIONS = "spark.sql.shuffle.partitions"


_OUTPUTS = {"bronze": ("bronze", "raw_events"), "silver": ("silver", "routed"),
            "worker_windows": ("silver", "worker_windows")}  # fmt: skip


def stage_output(name: str, warehouse: Warehouse) -> str:
    """The table a stage writes: the next stage's input."""
    return str(warehouse.table_uri(*_OUTPUTS[name]))


def _tables(warehouse: Warehouse) -> dict[str, str]:
    return {name: str(warehouse.table_uri(layer, name)) for layer, name in
            (("bronze", "raw_events"), ("silver", "routed"), ("silver", "quarantine"),
             ("silver", "routing_snapshots"), ("silver", "worker_windows"))}  # fmt: skip


Source = DataFrame | KafkaTopic
"""What bronze reads: a Kafka topic, or any streaming DataFrame with Kafka's columns."""


def _bronze_stage(spark: SparkSession, source: Source, spec: RunSpec, warehouse: Warehouse,
                  backend: TableBackend, checkpoint: str) -> Stage:  # fmt: skip
    table = warehouse.table_uri("bronze", "raw_events")
    app_id = f"{spec.run_id}-bronze"
    if isinstance(source, KafkaTopic) and source.min_partitions is None:
        # Two similar tasks per core, however skewed the topic's partitions are.
        source = replace(source, min_partitions=2 * spark.sparkContext.defaultParallelism)
    if isinstance(source, KafkaTopic) and can_land(backend):
        # Tasks write the messages to Parquet themselves; only file names reach the driver.
        files = landed_raw_events(spark, source, backend, warehouse.storage, table, spec.run_id)
        return Stage("bronze", files, landing_batch_writer(backend, table, app_id), checkpoint)
    rows = source.rows(spark) if isinstance(source, KafkaTopic) else source
    writer = foreach_batch_writer(backend, table, app_id)
    return Stage("bronze", raw_events(rows, spec.run_id), writer, checkpoint)


def build_stage(name: str, spark: SparkSession, source: Source, spec: RunSpec,
                warehouse: Warehouse, backend: TableBackend) -> Stage:  # fmt: skip
    """The ``bronze``, ``silver`` or ``worker_windows`` query (its input table must exist)."""
    tables = _tables(warehouse)
    checkpoint = str(warehouse.checkpoint(f"{spec.run_id}-{name.removeprefix('worker_')}"))
    this_run = F.col("run_id") == spec.run_id
    if name == "bronze":
        return _bronze_stage(spark, source, spec, warehouse, backend, checkpoint)
    if name == "silver":
        # One shuffle partition per splitter: Spark's scheduler then balances the
        # splitters' tasks over the cores, however skewed the Kafka partitions are.
        # Bounded bytes per micro-batch bound its memory, however many files a
        # bronze commit has (landing writes one per Kafka range).
        if delta_spark_available(spark):
            bronze = read_delta_stream(spark, tables["raw_events"], columns=BRONZE_INPUT,
                                       max_bytes_per_trigger=spec.silver_max_bytes_per_trigger)  # fmt: skip
            routed = route_stream(bronze.where(this_run), spec.source_type, spec.splitters,
                                  spec.grouping, spec.workers, spec.params,
                                  shuffle_partitions=spec.splitters)  # fmt: skip
        else:  # rows are packed as the bronze files are read
            keys = splitter_group_keys(spark, spec.splitters, spec.splitters)
            blocks = read_bronze_blocks(spark, warehouse.storage, tables["raw_events"], spec.run_id,
                                        spec.splitters, keys, spec.silver_max_bytes_per_trigger)  # fmt: skip
            routed = route_blocks(blocks, spec.source_type, spec.splitters, spec.grouping,
                                  spec.workers, spec.params)  # fmt: skip
        writer = silver_batch_writer(backend, tables["routed"], tables["quarantine"],
                                     f"{spec.run_id}-silver", tables["routing_snapshots"])  # fmt: skip
        return Stage(name, routed, writer, checkpoint, shuffle_partitions=spec.splitters)
    app_id, window_ms = f"{spec.run_id}-windows", spec.worker_window_ms
    if delta_spark_available(spark):
        silver_rows = read_delta_stream(spark, tables["routed"], columns=WINDOW_INPUT,
                                        max_files_per_trigger=spec.windows_max_files_per_trigger)  # fmt: skip
        writer = worker_windows_writer(backend, tables["worker_windows"], app_id, window_ms)
        return Stage(name, silver_rows.where(this_run), writer, checkpoint)
    # The read tasks reduce the tuples to partials; Spark merges far fewer rows.
    partials = read_window_partials(spark, warehouse.storage, tables["routed"], spec.run_id,
                                    window_ms, spec.windows_max_files_per_trigger)  # fmt: skip
    writer = worker_windows_writer(backend, tables["worker_windows"], app_id, window_ms,
                                   pre_aggregated=True)  # fmt: skip
    return Stage(name, partials, writer, checkpoint)


STAGES = ("bronze", "silver", "worker_windows")


def gold_settings(spec: RunSpec) -> GoldSettings:
    """What the gold refresh needs to know about the run."""
    return GoldSettings(spec.run_id, spec.workers, spec.grouping, dict(spec.params),
                        spec.aggregation_window_ms, spec.process_ms, spec.speed)  # fmt: skip


def run_finite(spark: SparkSession, source: Source, spec: RunSpec, warehouse: Warehouse,
               backend: TableBackend,
               after_stage: Callable[[str], None] | None = None) -> StageTimes:  # fmt: skip
    """Land, parse, route and aggregate everything ``source`` has now, then build gold.

    Args:
        spark: the session.
        source: a Kafka topic (landed by the bronze tasks on a local delta-rs
            warehouse, read as rows otherwise) or any streaming DataFrame with
            Kafka's columns (so tests and other sources plug in here).
        spec: the run.
        warehouse: where tables and checkpoints live.
        backend: the Delta backend.
        after_stage: called with ``"bronze"``, ``"silver"`` and ``"gold"`` once that
            layer is written (e.g. a data-quality gate, which stops the run by raising).
    """
    times = StageTimes()
    done = after_stage or (lambda layer: None)
    for name in STAGES:
        stage = build_stage(name, spark, source, spec, warehouse, backend)
        _drain(stage, times)
        if name != "silver":  # silver is whole once its worker windows are written
            done("bronze" if name == "bronze" else "silver")

    started = time.monotonic()
    refresh_gold(backend, warehouse, gold_settings(spec), times.seconds.get("silver", 0.0))
    times.seconds["gold"] = time.monotonic() - started
    done("gold")
    logger.info("run %s stages: %s", spec.run_id, times.seconds)
    return times
