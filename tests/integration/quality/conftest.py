"""Fixtures of the suite tests: hand-made frames validated as Spark DataFrames."""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd
import pyarrow as pa
import pytest
from pyspark.sql import DataFrame, SparkSession

from core.quality import SuiteOutcome, validate_frame


@pytest.fixture(scope="session")
def to_spark(spark: SparkSession) -> Callable[[pd.DataFrame], DataFrame]:
    """A pandas frame as a Spark DataFrame (through Arrow, so an empty frame keeps its columns)."""
    return lambda frame: spark.createDataFrame(pa.Table.from_pandas(frame, preserve_index=False))


@pytest.fixture(scope="session")
def validate(to_spark) -> Callable[..., SuiteOutcome]:
    """``validate(suite, pandas_frame)``: the suite's outcome on that frame, validated in Spark."""
    return lambda suite, frame: validate_frame(suite, to_spark(frame), "r")


@pytest.fixture(scope="session")
def failed(validate) -> Callable[..., set[tuple[str, str]]]:
    """``failed(suite, pandas_frame)``: the (expectation, column) pairs that failed."""
    return lambda suite, frame: {(f.expectation, f.column) for f in validate(suite, frame).failures}
