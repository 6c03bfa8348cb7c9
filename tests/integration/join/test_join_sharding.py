"""The join's input as the reader tasks prepare it: parsed as Spark's JSON parser does, placed per shard."""

from __future__ import annotations

import json

import pandas as pd
import pyarrow as pa
import pytest
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import from_arrow_schema

from core.spark.placement import group_keys_for
from silver.blocks import unpack
from silver.join.local import as_pandas
from silver.join.parsing import NO_CREATED_MS, NO_ID, parse_join_messages
from silver.join.schemas import VALUE_ARROW
from silver.join.sharding import shard_of_ids
from silver.join.source import join_blocks

pytestmark = pytest.mark.spark

# Odd values besides good ones: each must read as Spark's from_json reads it.
ODD_VALUES = [b'{"id": 5, "created_ms": 3}', b"not json", b'{"id": "a", "created_ms": "x"}',
              b"[1]", b'{"id": "a", "created_ms": 1.5}', b"", b'{"created_ms": 4}',
              b'{"heartbeat": true, "created_ms": 7}', b'{"id": "b", "created_ms": 8, "x": [1]}',
              b'{"id": null, "heartbeat": false, "created_ms": 9}', b"\xff\xfe",
              b'{"id": "c",\n "created_ms": 10}', b'{"id": "d", "created_ms": 99999999999999999999}']  # fmt: skip


def _kafka(values: list[bytes | None]) -> pa.RecordBatch:
    return pa.RecordBatch.from_pydict({"value": pa.array(values, pa.binary()),
                                       "partition": pa.array([3] * len(values), pa.int32()),
                                       "offset": pa.array(range(len(values)), pa.int64())})  # fmt: skip


def _spark_parse(spark, values: list[bytes | None]) -> pd.DataFrame:
    """The expressions the job ran in the JVM before it parsed in its reader tasks."""
    frame = spark.createDataFrame([(v,) for v in values], "value binary")
    m = F.from_json(F.col("value").cast("string"), from_arrow_schema(VALUE_ARROW))
    parsed = frame.select(m.alias("m")).select("m.id", "m.created_ms", "m.heartbeat")
    error = (F.when(F.col("created_ms").isNull(), F.lit(NO_CREATED_MS))
             .when(F.col("id").isNull() & ~F.coalesce(F.col("heartbeat"), F.lit(False)),
                   F.lit(NO_ID)))  # fmt: skip
    return parsed.select("id", "created_ms", error.alias("error")).toPandas()


@pytest.mark.parametrize("good", [0, 1_000])
def test_reader_tasks_parse_values_as_spark_from_json_does(spark, good):
    values = [json.dumps({"id": f"L{i:06d}", "created_ms": 1_000 + i}).encode()
              for i in range(good)] + ODD_VALUES + [None]  # fmt: skip
    ours = as_pandas(parse_join_messages(_kafka(values), side=1))
    theirs = _spark_parse(spark, values)
    assert ours["id"].tolist() == theirs["id"].tolist()
    assert ours["created_ms"].astype(object).where(ours["created_ms"].notna(), None).tolist() == [
        None if pd.isna(c) else int(c) for c in theirs["created_ms"]]  # fmt: skip
    assert ours["error"].tolist() == theirs["error"].tolist()
    assert (ours["side"] == 1).all() and ours["offset"].tolist() == list(range(len(values)))


def test_good_values_take_the_line_reader_with_the_same_result():
    values = [json.dumps({"id": f"L{i}", "created_ms": i}).encode() for i in range(500)]
    together = parse_join_messages(_kafka(values), side=0)
    # One odd value sends a batch through the per-value parse.
    each = parse_join_messages(_kafka([*values, b"not json"]), side=0).slice(0, 500)
    assert together.equals(each)


@pytest.mark.parametrize("shards", [2, 3])
def test_each_shard_gets_a_shuffle_partition_of_its_own(spark, shards):
    values = [json.dumps({"id": f"id-{i}", "created_ms": 5}).encode() for i in range(200)]
    keys = group_keys_for(spark, shards)
    blocks = join_blocks(_kafka(values), 0, shards, keys)
    offsets = unpack(blocks.column("block").to_pylist())["offset"].to_pylist()
    assert sorted(offsets) == list(range(200))
    frame = spark.createDataFrame(pa.Table.from_batches([blocks]).drop(["block"]).to_pandas())
    partitions = int(spark.conf.get("spark.sql.shuffle.partitions"))
    # The same hash partitioning a groupBy on shard_group shuffles with.
    placed = (frame.repartition(partitions, "shard_group")
              .select("shard", F.spark_partition_id().alias("task")).distinct().collect())  # fmt: skip
    task_of = {row["shard"]: row["task"] for row in placed}
    assert len(placed) == shards
    assert sorted(task_of.values()) == sorted(s % partitions for s in range(shards))


@pytest.mark.parametrize("shards", [2, 5])
def test_ids_take_the_shard_spark_hashes_them_to(spark, shards):
    ids = [f"id-{i}" for i in range(300)] + ["", "é", "日本語", "a" * 100]
    frame = spark.createDataFrame([(i,) for i in ids], "id string")
    theirs = [row["shard"] for row in
              frame.select(F.pmod(F.xxhash64("id"), F.lit(shards)).alias("shard")).collect()]  # fmt: skip
    assert shard_of_ids(pa.array(ids), shards).tolist() == theirs
