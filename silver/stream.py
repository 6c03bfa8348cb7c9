"""Silver's Spark glue: bronze rows, parsed and routed per splitter with state.

Thin on purpose: the parsing and the routing are the pure functions in
``silver.parsing`` and ``silver.routing``, the same objects ``dkg simulate`` uses.
A message's splitter follows from its Kafka partition alone, so parsing runs
inside the stateful step: one Python hop per micro-batch instead of two. Rows
cross Spark packed per splitter (``silver.blocks``): :func:`read_bronze_blocks`
packs them as bronze files are read, :func:`route_stream` packs any row stream.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Sequence
from typing import Any

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.streaming.state import GroupStateTimeout

from core.spark.input_rows import observe_input_rows
from core.spark.placement import spread_group_keys
from core.spark.sources import bind_source
from core.storage import Storage
from silver.blocks import BRONZE_BLOCKS_DDL, ROUTED_BLOCKS_DDL, bronze_blocks
from silver.bronze_source import BronzeBlocksSource
from silver.routing import route_blocks_with_state
from silver.schemas import BRONZE_INPUT, ROUTING_STATE_DDL

__all__ = ["BRONZE_INPUT", "read_bronze_blocks", "route_blocks", "route_stream",
           "splitter_group_keys"]  # fmt: skip


def splitter_group_keys(
    spark: SparkSession, splitters: int, shuffle_partitions: int | None
) -> list[int]:
    """Each splitter's grouping key: its own shuffle partition while there are enough."""
    partitions = shuffle_partitions or int(spark.conf.get("spark.sql.shuffle.partitions") or "200")
    return spread_group_keys(splitters, partitions)


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


def _pack_rows(batches: Iterator[pa.RecordBatch], splitters: int,
               group_keys: Sequence[int]) -> Iterator[pa.RecordBatch]:  # fmt: skip
    for batch in batches:
        if batch.num_rows:
            yield bronze_blocks(batch, splitters, group_keys)


def route_blocks(blocks: DataFrame, source_type: str, splitters: int, grouping: str,
                 workers: int, params: dict[str, Any]) -> DataFrame:  # fmt: skip
    """``groupBy(splitter).applyInPandasWithState``: each splitter owns a grouping instance.

    ``blocks``: ``BRONZE_BLOCKS_DDL`` rows. Returns ``ROUTED_BLOCKS_DDL`` rows holding
    one row per parsed tuple with its worker, one quarantine row per unparseable
    message, and one snapshot row per splitter and micro-batch (``ROUTED_ARROW``).
    """
    route = functools.partial(route_blocks_with_state, source_type=source_type, splitters=splitters,
                              grouping=grouping, workers=workers, params=dict(params))  # fmt: skip
    return blocks.groupBy("splitter_group").applyInPandasWithState(
        route, ROUTED_BLOCKS_DDL, ROUTING_STATE_DDL, "append", GroupStateTimeout.NoTimeout
    )


def route_stream(raw_events: DataFrame, source_type: str, splitters: int, grouping: str,
                 workers: int, params: dict[str, Any],
                 shuffle_partitions: int | None = None) -> DataFrame:  # fmt: skip
    """:func:`route_blocks` over any stream of bronze rows (packed here).

    ``shuffle_partitions``: what the query will start with (default: the session's).
    """
    keys = splitter_group_keys(raw_events.sparkSession, splitters, shuffle_partitions)
    pack = functools.partial(_pack_rows, splitters=splitters, group_keys=keys)
    blocks = raw_events.select(*BRONZE_INPUT).mapInArrow(pack, BRONZE_BLOCKS_DDL)
    return route_blocks(blocks, source_type, splitters, grouping, workers, params)
