"""The one SparkSession of a test run, built by the production builder."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pyspark.sql import SparkSession

from core.spark.session import build_spark


@pytest.fixture(scope="session")
def spark() -> Iterator[SparkSession]:
    """local[2], 2 shuffle partitions, UI off; ~8 s to start, so once per run."""
    session = build_spark(app_name="dkg-tests", master="local[2]", driver_memory="2g",
                          shuffle_partitions=2, ui=False)  # fmt: skip
    yield session
    session.stop()
