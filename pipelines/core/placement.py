"""Where Spark puts a group: grouping keys that give each group its own shuffle partition."""

from __future__ import annotations

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

__all__ = ["spread_group_keys"]


def spread_group_keys(spark: SparkSession, groups: int, partitions: int) -> list[int]:
    """One grouping key per group number, chosen so group ``g`` lands in shuffle partition
    ``g mod partitions``.

    Spark places a group by the Murmur3 hash of its key, and small integers
    collide: grouped by the number itself, groups 0, 1 and 3 of four share one
    of two partitions (so do 0 and 1 of two), and one core does their work while
    the other idles. The keys come from Spark's own hash, the one its planner uses.
    """
    candidate = F.col("id").cast("int")
    placed = spark.range(64 * groups * partitions).select(
        candidate.alias("key"), F.pmod(F.hash(candidate), F.lit(partitions)).alias("partition")
    )
    by_partition: dict[int, list[int]] = {}
    for row in placed.collect():
        by_partition.setdefault(row["partition"], []).append(row["key"])
    return [by_partition[g % partitions][g // partitions] for g in range(groups)]
