"""Silver's Spark glue: bronze rows, parsed and routed per splitter with state.

Thin on purpose: the parsing and the routing are the pure functions in
``silver.parsing`` and ``silver.routing``, the same objects ``dkg simulate`` uses.
A message's splitter follows from its Kafka partition alone, so parsing runs
inside the stateful step: one Python hop per micro-batch instead of two.
"""

from __future__ import annotations

import functools
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.streaming.state import GroupStateTimeout

from pipelines.core.placement import spread_group_keys
from silver.routing import route_group_with_state
from silver.schemas import ROUTED_DDL, ROUTING_STATE_DDL

__all__ = ["BRONZE_INPUT", "route_stream"]

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
