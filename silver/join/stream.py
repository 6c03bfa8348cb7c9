"""The join's Spark glue: parse both topics, tag shards, run the engine with state.

Thin on purpose: sharding and the join are the pure functions of
``silver.join.sharding`` and ``silver.join.operator``. The two Kafka streams are
unioned (each Spark task reads one topic partition), so the state machine sees
which partition every record came from, the thing the seed's sync needs.
"""

from __future__ import annotations

import functools

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.streaming.state import GroupStateTimeout

from silver.join.engine import JoinParams
from silver.join.operator import join_group_with_state
from silver.join.schemas import JOIN_STATE_DDL, OPERATOR_DDL, TAGGED_DDL, VALUE_DDL
from silver.join.sharding import tag_batches

__all__ = ["join_stream", "parse_join_rows"]


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


def join_stream(left_rows: DataFrame, right_rows: DataFrame, params: JoinParams, shards: int,
                run_id: str) -> DataFrame:  # fmt: skip
    """Both topics' Kafka rows -> the operator's rows (``OPERATOR_DDL``) with ``run_id``."""
    parsed = parse_join_rows(left_rows, 0).unionByName(parse_join_rows(right_rows, 1))
    tagged = parsed.mapInPandas(functools.partial(tag_batches, shards=shards), TAGGED_DDL)
    joined = tagged.groupBy("shard").applyInPandasWithState(
        functools.partial(join_group_with_state, params=params), OPERATOR_DDL, JOIN_STATE_DDL,
        "append", GroupStateTimeout.NoTimeout,
    )  # fmt: skip
    return joined.withColumn("run_id", F.lit(run_id))
