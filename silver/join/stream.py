"""The join's Spark glue: both topics as shard blocks, the engine with state per shard.

Thin on purpose: the join is the pure function of ``silver.join.operator``,
and parsing and sharding happen in the tasks that read Kafka
(``silver.join.source``). The two topics' block streams are unioned (each
Spark task reads one topic partition), so the state machine sees which
partition every record came from, the thing the seed's sync needs.
"""

from __future__ import annotations

import functools

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.streaming.state import GroupStateTimeout

from core.kafka.source import KafkaTopic
from core.spark.input_rows import observe_input_rows
from core.spark.placement import group_keys_for
from core.tables.task_files import TaskLanding
from silver.join.engine import JoinParams
from silver.join.operator import join_blocks_with_state
from silver.join.schemas import JOIN_OUTPUT_DDL, JOIN_STATE_DDL
from silver.join.source import read_join_blocks

__all__ = ["join_stream"]


def join_stream(spark: SparkSession, topics: tuple[KafkaTopic, KafkaTopic], params: JoinParams,
                shards: int, run_id: str, land: TaskLanding | None) -> DataFrame:  # fmt: skip
    """Both topics -> the join step's rows (``JOIN_OUTPUT_DDL``).

    Args:
        spark: the session.
        topics: the left and the right topic.
        params: the join's settings.
        shards: stateful groups of the join state.
        run_id: the tables' ``run_id``.
        land: where the join's tasks write the tables' files (delta-rs); None:
            they pass the rows on, packed.
    """
    # Grouped by the shard number itself, shards 0 and 1 would share a shuffle
    # partition, so one core would run both.
    keys = group_keys_for(spark, shards)
    # One read task per core in all: the two topics share the cores, the left one taking an odd one.
    cores = spark.sparkContext.defaultParallelism
    topics = tuple(topic.in_tasks(max(1, (cores + 1 - side) // 2)) for side, topic in enumerate(topics))
    left, right = (read_join_blocks(spark, topic, side, shards, keys)
                   for side, topic in enumerate(topics))  # fmt: skip
    blocks = observe_input_rows(left.unionByName(right), "rows")  # progress counts records
    join = functools.partial(join_blocks_with_state, params=params, run_id=run_id, land=land)
    return blocks.groupBy("shard_group").applyInPandasWithState(
        join, JOIN_OUTPUT_DDL, JOIN_STATE_DDL, "append", GroupStateTimeout.NoTimeout
    )
