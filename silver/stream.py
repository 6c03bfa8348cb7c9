"""Silver's Spark glue: bronze rows, parsed and routed per splitter with state.

Thin on purpose: the parsing and the routing are the pure functions in
``silver.parsing`` and ``silver.routing``, the same objects ``dkg simulate`` uses.
A message's splitter follows from its Kafka partition alone, so parsing runs
inside the stateful step: one Python hop per micro-batch instead of two.
"""

from __future__ import annotations

import functools
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.streaming.state import GroupStateTimeout

from silver.routing import route_group_with_state
from silver.schemas import ROUTED_DDL, ROUTING_STATE_DDL

__all__ = ["BRONZE_INPUT", "route_stream", "spread_group_keys"]

# What parsing needs of a bronze row; the Kafka key and topic stay in bronze.
BRONZE_INPUT = ("run_id", "partition", "offset", "timestamp", "value")


def route_stream(raw_events: DataFrame, source_type: str, splitters: int, grouping: str,
                 workers: int, params: dict[str, Any],
                 shuffle_partitions: int | None = None) -> DataFrame:  # fmt: skip
    """``groupBy(splitter).applyInPandasWithState``: each splitter owns a grouping instance.

    Returns one row per parsed tuple with its worker, one quarantine row per
    unparseable message, and one snapshot row per splitter and micro-batch.
    ``shuffle_partitions``: what the query will start with (default: the session's).
    """
    splitter = (F.col("partition") % F.lit(splitters)).cast("int")
    spark = raw_events.sparkSession
    partitions = shuffle_partitions or int(spark.conf.get("spark.sql.shuffle.partitions") or "200")
    group_keys = F.array(*map(F.lit, spread_group_keys(spark, splitters, partitions)))
    keyed = raw_events.select(group_keys[splitter].alias("splitter_group"),
                              splitter.alias("splitter"), *BRONZE_INPUT)  # fmt: skip
    route = functools.partial(route_group_with_state, source_type=source_type, splitters=splitters,
                              grouping=grouping, workers=workers, params=dict(params))  # fmt: skip
    return keyed.groupBy("splitter_group").applyInPandasWithState(
        route, ROUTED_DDL, ROUTING_STATE_DDL, "append", GroupStateTimeout.NoTimeout
    )


def spread_group_keys(spark: SparkSession, splitters: int, partitions: int) -> list[int]:
    """One grouping key per splitter, chosen so splitter ``s`` lands in shuffle partition
    ``s mod partitions``.

    Spark places a group by the Murmur3 hash of its key, and small integers
    collide: grouped by the splitter number itself, splitters 0, 1 and 3 of four
    share one of two partitions, so one core routes 80% of a skewed stream while
    the other idles. The keys come from Spark's own hash, the one its planner uses.
    """
    candidate = F.col("id").cast("int")
    placed = spark.range(64 * splitters * partitions).select(
        candidate.alias("key"), F.pmod(F.hash(candidate), F.lit(partitions)).alias("partition")
    )
    by_partition: dict[int, list[int]] = {}
    for row in placed.collect():
        by_partition.setdefault(row["partition"], []).append(row["key"])
    return [by_partition[s % partitions][s // partitions] for s in range(splitters)]
