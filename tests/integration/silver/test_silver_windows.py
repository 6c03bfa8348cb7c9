"""Worker-window partials computed in Spark equal the pure pandas definition."""

from __future__ import annotations

import pandas as pd
import pytest

from silver.windows import aggregate_worker_windows, worker_window_partials

pytestmark = pytest.mark.spark


def test_spark_partials_equal_the_pandas_definition(spark):
    routed = pd.DataFrame({
        "run_id": ["r", "r", "r", "r", "s", "r"], "key": ["a", "a", "b", "a", "a", "a"],
        "count": [2, 3, 1, 4, 5, 1], "worker": [0, 0, 1, 0, 0, 2],
        "event_time_ms": [0, 14_999, 1, 15_000, 3, 29_999],
    })  # fmt: skip
    frame = spark.createDataFrame(routed.astype({"worker": "int32"}))
    actual = aggregate_worker_windows(frame, 15_000).toPandas()
    expected = worker_window_partials(routed, 15_000)
    assert list(actual.columns) == list(expected.columns)
    order = ["run_id", "window_start_ms", "worker", "key"]
    actual = actual.sort_values(order).reset_index(drop=True)
    pd.testing.assert_frame_equal(actual, expected.sort_values(order).reset_index(drop=True),
                                  check_dtype=False)  # fmt: skip
