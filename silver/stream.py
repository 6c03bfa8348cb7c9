"""Silver's Spark glue: bronze rows, parsed and routed per splitter, served per worker, with state.

Thin on purpose: the parsing, the routing and the workers are the pure
functions in ``silver.parsing``, ``silver.routing`` and ``silver.workers``, the
same objects ``dkg simulate`` uses. A message's splitter follows from its Kafka
partition alone, so parsing runs inside the routing step: one Python hop per
micro-batch instead of two. Rows cross Spark packed (``silver.blocks``): per
splitter into the routing (:func:`read_kafka_blocks` packs them as Kafka is
read and landed in bronze, :func:`read_bronze_blocks` as bronze files are read,
:func:`route_stream` packs any row stream), per worker from
the routing into the workers' step (:func:`serve_workers`, run by the query's
``foreachBatch``: a query may hold one ``applyInPandasWithState`` only).
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pandas as pd
import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.streaming.state import GroupStateTimeout

from core.kafka.source import KafkaTopic, require_topic
from core.spark.input_rows import observe_input_rows
from core.spark.placement import group_keys_for
from core.spark.sources import bind_source
from core.storage import Storage
from core.tables.task_files import TaskLanding
from silver.blocks import BRONZE, BRONZE_BLOCKS_DDL, ROUTED_BLOCKS_DDL, bronze_blocks
from silver.bronze_source import BronzeBlocksSource
from silver.kafka_blocks import KafkaBlocksSource
from silver.routing import Routing, route_blocks_with_state
from silver.schemas import BRONZE_INPUT, ROUTING_STATE_DDL
from silver.workers import WORKER_OUTPUT_DDL, QueueState, WorkerServing, serve_worker_group

__all__ = ["BRONZE_INPUT", "read_bronze_blocks", "read_kafka_blocks", "route_blocks", "route_stream",
           "serve_workers"]  # fmt: skip


def read_bronze_blocks(spark: SparkSession, storage: Storage, bronze: str, run_id: str,
                       splitters: int,
                       group_keys: Sequence[int], max_bytes_per_trigger: int | None = None,
                       ) -> DataFrame:  # fmt: skip
    """The run's new bronze rows as a stream of blocks, packed while the files are read."""
    source = bind_source(spark, BronzeBlocksSource, storage=storage)
    reader = spark.readStream.format(source).option("path", bronze).option("runId", run_id)
    reader = reader.option("splitters", str(splitters))
    reader = reader.option("groupKeys", ",".join(map(str, group_keys)))
    if max_bytes_per_trigger:
        reader = reader.option("maxBytesPerTrigger", str(max_bytes_per_trigger))
    return observe_input_rows(reader.load(), "rows")  # Spark counts blocks; progress, messages


def read_kafka_blocks(spark: SparkSession, topic: KafkaTopic, storage: Storage, bronze: str,
                      run_id: str, splitters: int, group_keys: Sequence[int]) -> DataFrame:  # fmt: skip
    """The topic's new messages as a stream of blocks, landed in ``bronze`` as they are read.

    The ``files`` blocks name the landed files; the silver query's writer commits them.

    Raises:
        BrokerError: the topic does not exist (asked on the driver, so the message
            is not buried in a failed query's trace).
    """
    require_topic(topic)
    topic = topic.in_tasks(spark.sparkContext.defaultParallelism)  # one read task per core
    source = bind_source(spark, KafkaBlocksSource, client=topic.client, storage=storage)
    reader = spark.readStream.format(source).options(**topic.options())
    reader = reader.option("path", bronze).option("run_id", run_id)
    reader = reader.option("splitters", str(splitters))
    reader = reader.option("groupKeys", ",".join(map(str, group_keys)))
    # Spark counts blocks; progress wants messages, which the file rows would count twice.
    return observe_input_rows(reader.load(), F.when(F.col("kind") == BRONZE, F.col("rows")))


def _pack_rows(batches: Iterator[pa.RecordBatch], splitters: int,
               group_keys: Sequence[int]) -> Iterator[pa.RecordBatch]:  # fmt: skip
    for batch in batches:
        if batch.num_rows:
            yield bronze_blocks(batch, splitters, group_keys)


def route_blocks(blocks: DataFrame, routing: Routing, worker_keys: Sequence[int],
                 land: TaskLanding | None = None, snapshot_every: int = 1) -> DataFrame:  # fmt: skip
    """``groupBy(splitter).applyInPandasWithState``: each splitter owns a grouping instance.

    ``blocks``: ``BRONZE_BLOCKS_DDL`` rows. Returns ``ROUTED_BLOCKS_DDL`` rows: the
    tuples packed per worker (for :func:`serve_workers`, grouped by ``worker_keys``)
    and each splitter's routing output for the silver tables (landed as files by
    ``land``, or packed; see :func:`silver.routing.route_blocks_with_state`), with
    their routing snapshots every ``snapshot_every`` micro-batches.
    """
    route = functools.partial(route_blocks_with_state, routing=routing,
                              worker_keys=list(worker_keys), land=land,
                              snapshot_every=snapshot_every)  # fmt: skip
    return blocks.groupBy("splitter_group").applyInPandasWithState(
        route, ROUTED_BLOCKS_DDL, ROUTING_STATE_DDL, "append", GroupStateTimeout.NoTimeout
    )


def route_stream(raw_events: DataFrame, routing: Routing, worker_keys: Sequence[int],
                 land: TaskLanding | None = None, shuffle_partitions: int | None = None,
                 snapshot_every: int = 1) -> DataFrame:  # fmt: skip
    """:func:`route_blocks` over any stream of bronze rows (packed here).

    ``shuffle_partitions``: what the query will start with (default: the session's).
    """
    keys = group_keys_for(raw_events.sparkSession, routing.splitters, shuffle_partitions)
    pack = functools.partial(_pack_rows, splitters=routing.splitters, group_keys=keys)
    blocks = raw_events.select(*BRONZE_INPUT).mapInArrow(pack, BRONZE_BLOCKS_DDL)
    return route_blocks(blocks, routing, worker_keys, land, snapshot_every)


def serve_workers(routed: DataFrame, serving: WorkerServing, queues: Mapping[int, QueueState],
                  batch_id: int) -> DataFrame:  # fmt: skip
    """``groupBy(worker_group).applyInPandas``: each worker counts and queues its tuples.

    Called in the query's ``foreachBatch`` with the micro-batch's routing output
    (:func:`route_blocks`) and the workers' queues before it. Returns
    ``WORKER_OUTPUT_DDL`` rows: the partials (landed as files by ``serving``, or
    packed), each served worker's new queue, and the routing's rows for the
    silver tables, passed on.
    """
    before = dict(queues)

    # A function, not a partial: Spark reads a grouped function's type hints, and
    # warns on every micro-batch when it cannot.
    def serve(key: tuple[Any, ...], blocks: pd.DataFrame) -> pd.DataFrame:
        return serve_worker_group(key, blocks, serving, before, batch_id)

    return routed.groupBy("worker_group").applyInPandas(serve, WORKER_OUTPUT_DDL)
