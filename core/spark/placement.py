"""Where Spark puts a group: grouping keys that give each group its own shuffle partition."""

from __future__ import annotations

import struct
from typing import TYPE_CHECKING

import mmh3

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["SPARK_HASH_SEED", "group_keys_for", "spark_int_hash", "spread_group_keys"]

SPARK_HASH_SEED = 42
"""The seed of Spark's ``hash`` function (Murmur3, x86 32-bit)."""


def spark_int_hash(value: int) -> int:
    """Spark's ``hash(value)`` for an INT column: Murmur3 of its 4 little-endian bytes."""
    return mmh3.hash(struct.pack("<i", value), SPARK_HASH_SEED)


def spread_group_keys(groups: int, partitions: int) -> list[int]:
    """One grouping key per group number, chosen so group ``g`` lands in shuffle partition
    ``g mod partitions``.

    Spark places a group by ``pmod(hash(key), partitions)``, and small integers
    collide: grouped by the number itself, groups 0, 1 and 3 of four share one
    of two partitions (so do 0 and 1 of two), and one core does their work while
    the other idles. The hash is computed here as Spark does (a test checks it
    against Spark's own), so building a query runs no Spark job.
    """
    wanted = [g % partitions for g in range(groups)]
    by_partition: dict[int, list[int]] = {}
    key = 0
    # Keys in ascending order; group g takes the (g // partitions)-th of its partition.
    while not all(len(by_partition.get(p, ())) > g // partitions for g, p in enumerate(wanted)):
        by_partition.setdefault(spark_int_hash(key) % partitions, []).append(key)
        key += 1
    return [by_partition[p][g // partitions] for g, p in enumerate(wanted)]


def group_keys_for(spark: SparkSession, groups: int, partitions: int | None = None) -> list[int]:
    """:func:`spread_group_keys` over ``partitions`` (default: the session's shuffle partitions).

    Pass the partition count a query will start with when it sets its own.
    """
    partitions = partitions or int(spark.conf.get("spark.sql.shuffle.partitions") or "200")
    return spread_group_keys(groups, partitions)
