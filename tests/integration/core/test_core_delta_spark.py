"""delta-spark backend: runs only where Spark can load the Delta jars."""

from __future__ import annotations

from collections.abc import Callable

import pyarrow as pa
import pytest
from pyspark.sql import SparkSession

from core.spark.session import delta_spark_available
from core.tables import DeltaRsBackend, DeltaSparkBackend, TableBackend
from core.warehouse import Warehouse

pytestmark = pytest.mark.spark

Events = Callable[[int, int], pa.Table]


@pytest.fixture
def native(core_spark: SparkSession) -> DeltaSparkBackend:
    if not delta_spark_available(core_spark):
        pytest.skip("Delta jars are not on the classpath")
    return DeltaSparkBackend(core_spark)


def test_backend_satisfies_the_protocol(core_spark: SparkSession) -> None:
    assert isinstance(DeltaSparkBackend(core_spark), TableBackend)


def test_append_replay_is_skipped(
    native: DeltaSparkBackend, warehouse: Warehouse, events: Events
) -> None:
    path = warehouse.table_uri("bronze", "raw_events")
    assert native.append(path, events(0, 3), "q", 0)
    version = native.version(path)

    assert not native.append(path, events(10, 3), "q", 0)

    assert native.version(path) == version
    assert native.read(path).num_rows == 3


def test_merge_upserts(native: DeltaSparkBackend, warehouse: Warehouse) -> None:
    path = warehouse.table_uri("gold", "key_counts")
    native.merge(path, pa.table({"key": ["a", "b"], "n": [1, 2]}), ["key"], "q", 0)
    native.merge(path, pa.table({"key": ["b"], "n": [5]}), ["key"], "q", 1)

    assert sorted(native.read(path).to_pylist(), key=lambda r: r["key"]) == [
        {"key": "a", "n": 1},
        {"key": "b", "n": 5},
    ]


def test_tables_written_by_delta_rs_read_natively(
    native: DeltaSparkBackend, warehouse: Warehouse, events: Events
) -> None:
    path = warehouse.table_uri("bronze", "raw_events")
    DeltaRsBackend().append(path, events(0, 4), "q", 0)

    assert native.read(path).num_rows == 4
