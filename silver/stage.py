"""Silver's stages: routing (bronze -> ``silver.routed``) and the workers (-> their partials)."""

from __future__ import annotations

import functools

from pyspark.sql import functions as F

from core.spark.placement import spread_group_keys
from core.spark.session import delta_spark_available
from core.spark.stages import RunContext, Stage, StageDef
from core.tables import read_delta_stream
from silver.routed_source import (
    WORKER_BLOCKS_DDL,
    WORKER_READ,
    pack_worker_rows,
    read_worker_blocks,
)
from silver.sink import SilverTables, silver_batch_writer
from silver.stream import (
    BRONZE_INPUT,
    read_bronze_blocks,
    route_blocks,
    route_stream,
    splitter_group_keys,
)
from silver.worker_query import WorkerTables, serve_workers, worker_tables_writer

__all__ = ["ROUTING", "WORKERS"]


def _routing(run: RunContext) -> Stage:
    spark, spec, warehouse = run.spark, run.spec, run.warehouse
    bronze = str(warehouse.table_uri("bronze", "raw_events"))
    # One shuffle partition per splitter: Spark's scheduler then balances the
    # splitters' tasks over the cores, however skewed the Kafka partitions are.
    # Bounded bytes per micro-batch bound its memory, however many files a
    # bronze commit has (landing writes one per Kafka range).
    if delta_spark_available(spark):
        rows = read_delta_stream(spark, bronze, columns=BRONZE_INPUT,
                                 max_bytes_per_trigger=spec.silver_max_bytes_per_trigger)  # fmt: skip
        routed = route_stream(rows.where(F.col("run_id") == spec.run_id), spec.source_type,
                              spec.splitters, spec.grouping, spec.workers, spec.params,
                              shuffle_partitions=spec.splitters)  # fmt: skip
    else:  # rows are packed as the bronze files are read
        keys = splitter_group_keys(spark, spec.splitters, spec.splitters)
        blocks = read_bronze_blocks(spark, warehouse.storage, bronze, spec.run_id, spec.splitters,
                                    keys, spec.silver_max_bytes_per_trigger)  # fmt: skip
        routed = route_blocks(blocks, spec.source_type, spec.splitters, spec.grouping,
                              spec.workers, spec.params)  # fmt: skip
    tables = SilverTables(*(str(warehouse.table_uri("silver", name))
                            for name in ("routed", "quarantine", "routing_snapshots")))  # fmt: skip
    writer = silver_batch_writer(run.backend, warehouse.storage, tables, f"{spec.run_id}-silver")
    return Stage("silver", routed, writer, run.checkpoint("silver"),
                 shuffle_partitions=spec.splitters)  # fmt: skip


def _workers(run: RunContext) -> Stage:
    spark, spec, warehouse = run.spark, run.spec, run.warehouse
    routed = str(warehouse.table_uri("silver", "routed"))
    # Two shuffle partitions per core, the workers spread evenly over them (as many as
    # there are workers, if fewer): the queues' work keeps every core busy.
    partitions = max(1, min(spec.workers, 2 * spark.sparkContext.defaultParallelism))
    keys = spread_group_keys(spec.workers, partitions)
    if delta_spark_available(spark):
        rows = read_delta_stream(spark, routed, columns=WORKER_READ.names,
                                 max_files_per_trigger=spec.windows_max_files_per_trigger)  # fmt: skip
        blocks = rows.where(F.col("run_id") == spec.run_id).mapInArrow(
            functools.partial(pack_worker_rows, group_keys=keys), WORKER_BLOCKS_DDL)  # fmt: skip
    else:  # tuples are packed per worker as the routed files are read
        blocks = read_worker_blocks(spark, warehouse.storage, routed, spec.run_id, keys,
                                    spec.windows_max_files_per_trigger)  # fmt: skip
    served = serve_workers(blocks, spec.worker_window_ms, spec.process_ms, spec.speed)
    tables = WorkerTables(str(warehouse.table_uri("silver", "worker_windows")),
                          str(warehouse.table_uri("silver", "worker_latency")))  # fmt: skip
    writer = worker_tables_writer(run.backend, warehouse.storage, tables, spec.run_id,
                                  f"{spec.run_id}-workers")  # fmt: skip
    return Stage("workers", served, writer, run.checkpoint("workers"), shuffle_partitions=partitions)


ROUTING = StageDef("silver", ("silver", "routed"), _routing)
"""Parses bronze's messages and routes each tuple to a worker with the run's grouping."""

WORKERS = StageDef("workers", ("silver", "worker_windows"), _workers)
"""Each worker counts its tuples per window and serves them in its FIFO queue."""
