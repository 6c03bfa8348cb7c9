"""Silver's stage: one query routes the messages and serves them in the workers' queues.

With a Kafka topic and the delta-rs backend it reads the topic itself and its
read tasks land bronze's files (``RunContext.landed_topic``); otherwise it
reads ``bronze.raw_events``, which bronze's own query writes.
"""

from __future__ import annotations

import functools

from pyspark.sql import functions as F

from bronze.schemas import RAW_EVENTS, RAW_EVENTS_ARROW
from core.spark.placement import spread_group_keys
from core.spark.session import delta_spark_available
from core.stages import (
    IN_MEMORY_STATE_STORE,
    RunContext,
    Stage,
    StageDef,
    recorded_shuffle_partitions,
)
from core.tables import read_delta_stream
from core.tables.sink import recorded_anywhere
from silver.routing import Routing
from silver.schemas import (
    QUARANTINE,
    ROUTED_TABLE,
    ROUTING_SNAPSHOTS,
    WORKER_BUSY,
    WORKER_LATENCY,
    WORKER_WINDOWS,
)
from silver.sink import SilverTables, silver_batch_writer
from silver.stream import (
    BRONZE_INPUT,
    read_bronze_blocks,
    read_kafka_blocks,
    route_blocks,
    route_stream,
)
from silver.workers import WorkerServing

__all__ = ["SILVER"]


def _silver(run: RunContext) -> Stage:
    spark, plan, warehouse = run.spark, run.plan, run.warehouse
    bronze = str(warehouse.table_uri(*RAW_EVENTS))
    # Both steps share the query's shuffle partitions, a task each per micro-batch,
    # and grouping keys spread the splitters and the workers evenly over them. A task
    # costs about 0.1 s whatever its rows, so in model mode one per core runs each
    # step in one wave. In physical mode the workers burn real CPU: a partition for
    # each splitter and up to two per core let Spark's scheduler balance skewed
    # workers over the cores. A checkpoint keeps the count it started with.
    cores, physical = spark.sparkContext.defaultParallelism, plan.run.work == "cpu"
    partitions = recorded_shuffle_partitions(run.checkpoint("silver")) or (
        max(plan.splitters, min(plan.workers, 2 * cores)) if physical
        else min(cores, max(plan.splitters, plan.workers)))
    splitter_keys = spread_group_keys(plan.splitters, partitions)
    worker_keys = spread_group_keys(plan.workers, partitions)
    app_id = plan.query_id("silver")
    topic = run.landed_topic
    tables = SilverTables(*(str(warehouse.table_uri(*table)) for table in
                            (ROUTED_TABLE, QUARANTINE, ROUTING_SNAPSHOTS, WORKER_LATENCY,
                             WORKER_WINDOWS)),
                          bronze=bronze if topic is not None else None,
                          busy=str(warehouse.table_uri(*WORKER_BUSY)) if physical else None)  # fmt: skip
    # With delta-rs the tasks write the tables' files; the driver commits their names.
    landing = run.backend.commits_task_files
    routing_land = tables.routing_landing(warehouse.storage, app_id) if landing else None
    routing = Routing.of(plan)
    serving = WorkerServing(plan.run.worker_window_ms, plan.run.process_ms, plan.speed, plan.run_id,
                            tables.partials_landing(warehouse.storage, app_id) if landing else None,
                            cpu_work=physical)  # fmt: skip
    if topic is not None:  # bronze is landed by this query's read tasks
        run.backend.create_if_missing(bronze, RAW_EVENTS_ARROW)
        blocks = read_kafka_blocks(spark, topic, warehouse.storage, bronze, plan.run_id,
                                   plan.splitters, splitter_keys)  # fmt: skip
        routed = route_blocks(blocks, routing, worker_keys, routing_land, run.snapshot_every)
    # Reading bronze, bounded bytes per micro-batch bound its memory, however many
    # files a bronze commit has.
    elif delta_spark_available(spark):
        rows = read_delta_stream(spark, bronze, columns=BRONZE_INPUT,
                                 max_bytes_per_trigger=plan.run.silver_max_bytes_per_trigger)  # fmt: skip
        routed = route_stream(rows.where(F.col("run_id") == plan.run_id), routing, worker_keys,
                              routing_land, shuffle_partitions=partitions,
                              snapshot_every=run.snapshot_every)  # fmt: skip
    else:  # rows are packed as the bronze files are read
        blocks = read_bronze_blocks(spark, warehouse.storage, bronze, plan.run_id, plan.splitters,
                                    splitter_keys, plan.run.silver_max_bytes_per_trigger)  # fmt: skip
        routed = route_blocks(blocks, routing, worker_keys, routing_land, run.snapshot_every)
    # The workers serve each micro-batch in the writer: one stateful step per query.
    writer = silver_batch_writer(run.backend, warehouse.storage, tables, app_id, serving)
    # The routing's state is one small snapshot per splitter: the in-memory store
    # commits it as one file, where RocksDB flushed, checkpointed and copied files
    # for each partition in every micro-batch (measured: ~70 ms per partition).
    recorded = functools.partial(recorded_anywhere, run.backend,
                                 list(tables.files_tables().values()), app_id)  # fmt: skip
    return Stage("silver", routed, writer, run.checkpoint("silver"), shuffle_partitions=partitions,
                 state_store=IN_MEMORY_STATE_STORE, recorded=recorded)  # fmt: skip


SILVER = StageDef("silver", WORKER_WINDOWS, _silver)
"""Parses the messages, routes each tuple with the run's grouping, and each
worker counts its tuples per window and serves them in its FIFO queue."""
