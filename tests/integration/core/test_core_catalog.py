"""Batch reads and SQL names over tables written by delta-rs (no Delta jars)."""

from __future__ import annotations

from collections.abc import Callable

import pyarrow as pa
import pytest
from chispa import assert_df_equality
from pyspark.sql import SparkSession

from core.tables import DeltaRsBackend, read_delta, register_tables
from core.warehouse import Warehouse

pytestmark = pytest.mark.spark

Events = Callable[[int, int], pa.Table]


def test_batch_read_equals_what_delta_rs_wrote(
    core_spark: SparkSession, warehouse: Warehouse, backend: DeltaRsBackend, events: Events
) -> None:
    path = warehouse.table_uri("bronze", "raw_events")
    written = pa.concat_tables([events(0, 30), events(30, 30)])
    backend.append(path, written.slice(0, 30), "q", 0)
    backend.append(path, written.slice(30), "q", 1)

    actual = read_delta(core_spark, path)

    expected = core_spark.createDataFrame(written)
    assert_df_equality(actual, expected, ignore_row_order=True, ignore_nullable=True)


def test_batch_read_of_an_older_version(
    core_spark: SparkSession, warehouse: Warehouse, backend: DeltaRsBackend, events: Events
) -> None:
    path = warehouse.table_uri("bronze", "raw_events")
    backend.append(path, events(0, 5), "q", 0)
    backend.merge(path, events(3, 5), ["id"], "q", 1)

    assert read_delta(core_spark, path, version=0).count() == 5
    assert read_delta(core_spark, path).count() == 8


def test_sql_by_layer_and_table_name(
    core_spark: SparkSession, warehouse: Warehouse, backend: DeltaRsBackend, events: Events
) -> None:
    backend.append(warehouse.table_uri("bronze", "raw_events"), events(0, 14), "q", 0)
    backend.merge(
        warehouse.table_uri("gold", "key_counts"),
        pa.table({"key": ["a", "b"], "total": [3, 4]}),
        ["key"],
        "q",
        0,
    )

    names = register_tables(core_spark, warehouse)

    assert names == ["bronze.raw_events", "gold.key_counts"]
    per_key = core_spark.sql(
        "SELECT key, count(*) AS n FROM bronze.raw_events GROUP BY key ORDER BY key"
    ).collect()
    assert [(r.key, r.n) for r in per_key] == [(f"k{i}", 2) for i in range(7)]
    joined = core_spark.sql(
        "SELECT sum(total) AS t FROM gold.key_counts g WHERE g.key IN ('a', 'b')"
    ).first()
    assert joined is not None and joined.t == 7
    assert (warehouse.state_dir / "_catalog" / "gold.db").is_dir()  # not ./spark-warehouse


def test_registered_tables_see_new_commits_and_reregistering_is_idempotent(
    core_spark: SparkSession, warehouse: Warehouse, backend: DeltaRsBackend
) -> None:
    path = warehouse.table_uri("gold", "runs")
    backend.append(path, pa.table({"run_id": ["r1"]}), "q", 0)
    register_tables(core_spark, warehouse)
    backend.append(path, pa.table({"run_id": ["r2"]}), "q", 1)

    # New commits are visible without re-registering: each query plans a fresh snapshot.
    assert core_spark.sql("SELECT count(*) AS n FROM gold.runs").first().n == 2
    assert register_tables(core_spark, warehouse) == ["gold.runs"]
    assert core_spark.sql("SELECT count(*) AS n FROM gold.runs").first().n == 2
