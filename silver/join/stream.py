"""The join's Spark glue: parse both topics, tag shards, run the engine with state.

Thin on purpose: the join is the pure function of ``silver.join.operator``, and
sharding the rule of ``silver.join.sharding`` written as a Spark expression
(tests check both agree). The two Kafka streams are unioned (each Spark task
reads one topic partition), so the state machine sees which partition every
record came from, the thing the seed's sync needs.
"""

from __future__ import annotations

import functools

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.streaming.state import GroupStateTimeout

from core.spark.placement import spread_group_keys
from silver.join.engine import JoinParams
from silver.join.operator import join_group_with_state
from silver.join.schemas import JOIN_STATE_DDL, OPERATOR_DDL, VALUE_DDL

__all__ = ["join_stream", "keyed_by_shard", "parse_join_rows", "shard_column"]


def _error(message: Column) -> Column:
    return (F.when(message["created_ms"].isNull(), F.lit("not a join record: no valid created_ms"))
            .when(message["id"].isNull() & ~F.coalesce(message["heartbeat"], F.lit(False)),
                  F.lit("record without id")))  # fmt: skip


def parse_join_rows(kafka_rows: DataFrame, side: int) -> DataFrame:
    """Kafka rows of one topic -> ``side, partition, offset, id, created_ms, error``."""
    message = F.from_json(F.col("value").cast("string"), VALUE_DDL)
    parsed = kafka_rows.select(F.lit(side).cast("int").alias("side"), "partition", "offset",
                               message.alias("m"))  # fmt: skip
    return parsed.select("side", "partition", "offset", F.col("m.id").alias("id"),
                         F.col("m.created_ms").alias("created_ms"),
                         _error(F.col("m")).alias("error"))  # fmt: skip


def shard_column(shards: int) -> Column:
    """A parsed row's shards (``silver.join.sharding``'s rule) as one array, to explode."""
    heartbeat = F.col("id").isNull() & F.col("error").isNull()
    # F.xxhash64 always seeds with 42, the SHARD_HASH_SEED the pandas side uses.
    return (F.when(heartbeat, F.sequence(F.lit(0), F.lit(shards - 1)))
            .when(F.col("error").isNotNull(), F.array(F.pmod(F.col("partition"), F.lit(shards))))
            .otherwise(F.array(F.pmod(F.xxhash64("id"), F.lit(shards)).cast("int"))))  # fmt: skip


def keyed_by_shard(parsed: DataFrame, shards: int) -> DataFrame:
    """Parsed rows with their ``shard`` and a ``shard_group`` key that places each shard alone.

    Sharding stays in the JVM: a Python step here would convert every row twice
    more. Grouped by the shard number itself, shards 0 and 1 would share a
    shuffle partition, so one core would run both.
    """
    spark = parsed.sparkSession
    partitions = int(spark.conf.get("spark.sql.shuffle.partitions") or "200")
    group_keys = F.array(*map(F.lit, spread_group_keys(shards, partitions)))
    tagged = parsed.withColumn("shard", F.explode(shard_column(shards)))
    return tagged.withColumn("shard_group", group_keys[F.col("shard")])


def join_stream(left_rows: DataFrame, right_rows: DataFrame, params: JoinParams, shards: int,
                run_id: str) -> DataFrame:  # fmt: skip
    """Both topics' Kafka rows -> the operator's rows (``OPERATOR_DDL``) with ``run_id``."""
    parsed = parse_join_rows(left_rows, 0).unionByName(parse_join_rows(right_rows, 1))
    joined = keyed_by_shard(parsed, shards).groupBy("shard_group").applyInPandasWithState(
        functools.partial(join_group_with_state, params=params), OPERATOR_DDL, JOIN_STATE_DDL,
        "append", GroupStateTimeout.NoTimeout,
    )  # fmt: skip
    return joined.withColumn("run_id", F.lit(run_id))
