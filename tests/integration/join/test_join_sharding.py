"""The streaming job's sharding expression (JVM) agrees with the pandas rule the local join uses."""

from __future__ import annotations

import pandas as pd
import pytest
from pyspark.sql import functions as F

from silver.join.sharding import TAGGED_COLUMNS, tag_shards
from silver.join.stream import keyed_by_shard, shard_column

PARSED_DDL = "side int, partition int, offset long, id string, created_ms long, error string"


def test_spark_shards_rows_exactly_as_the_pandas_rule(spark):
    ids = [f"L{i:09d}" for i in range(500)] + ["", "ü-ß-日本", "x" * 1_000, "a", "ab", "abc"]
    rows = pd.DataFrame({"side": [i % 2 for i in range(len(ids))],
                         "partition": [i % 5 for i in range(len(ids))],
                         "offset": range(len(ids)), "id": ids,
                         "created_ms": range(1_000, 1_000 + len(ids)), "error": None})  # fmt: skip
    extra = pd.DataFrame({"side": [1, 0], "partition": [3, 4], "offset": [900, 901],
                          "id": [None, None], "created_ms": [99_999, None],
                          "error": [None, "record without id"]})  # fmt: skip
    parsed = pd.concat([rows, extra], ignore_index=True)
    frame = spark.createDataFrame(parsed.astype({"created_ms": "Int64"}), PARSED_DDL)
    in_jvm = frame.withColumn("shard", F.explode(shard_column(3))).toPandas()
    in_pandas = tag_shards(parsed, 3)
    key = ["side", "partition", "offset", "shard"]
    assert (in_jvm[TAGGED_COLUMNS].sort_values(key).reset_index(drop=True)[key]
            .equals(in_pandas.sort_values(key).reset_index(drop=True)[key]))  # fmt: skip
    assert len(in_jvm) == len(ids) + 3 + 1
    assert in_jvm["shard"].nunique() == 3


@pytest.mark.parametrize("shards", [2, 3])
def test_each_shard_gets_a_shuffle_partition_of_its_own(spark, shards):
    ids = pd.DataFrame({"side": 0, "partition": 0, "offset": range(200),
                        "id": [f"id-{i}" for i in range(200)], "created_ms": 5, "error": None})  # fmt: skip
    frame = spark.createDataFrame(ids.astype({"created_ms": "Int64"}), PARSED_DDL)
    keyed = keyed_by_shard(frame, shards)
    partitions = int(spark.conf.get("spark.sql.shuffle.partitions"))
    # The same hash partitioning a groupBy on shard_group shuffles with.
    placed = (keyed.repartition(partitions, "shard_group")
              .select("shard", F.spark_partition_id().alias("task")).distinct().collect())  # fmt: skip
    task_of = {row["shard"]: row["task"] for row in placed}
    assert len(placed) == shards
    assert sorted(task_of.values()) == sorted(s % partitions for s in range(shards))
