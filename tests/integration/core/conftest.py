"""Fixtures for the core integration tests: one real SparkSession, real Delta tables."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pytest
from pyspark.sql import SparkSession

from core.tables import DeltaRsBackend
from core.warehouse import Warehouse


@pytest.fixture(scope="session")
def core_spark(spark: SparkSession) -> SparkSession:
    """The run's shared session (see tests/integration/conftest.py)."""
    return spark


@pytest.fixture
def warehouse(tmp_path: Path) -> Warehouse:
    return Warehouse(tmp_path / "lakehouse")


@pytest.fixture
def backend() -> DeltaRsBackend:
    return DeltaRsBackend()


@pytest.fixture
def events() -> Callable[[int, int], pa.Table]:
    """Factory: ``events(start, n)`` -> rows with ids ``start .. start+n-1``."""

    def make(start: int, n: int) -> pa.Table:
        ids = list(range(start, start + n))
        return pa.table(
            {
                "id": pa.array(ids, pa.int64()),
                "key": pa.array([f"k{i % 7}" for i in ids], pa.string()),
                "count": pa.array([i % 5 + 1 for i in ids], pa.int32()),
                "event_time": pa.array([i * 1000 for i in ids], pa.timestamp("us", tz="UTC")),
            }
        )

    return make
