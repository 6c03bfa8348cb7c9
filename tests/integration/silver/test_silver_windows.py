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


def test_partials_from_several_tasks_merge_to_the_pandas_definition(spark):
    import numpy as np
    import pyarrow as pa

    from silver.windows import PARTIALS_DDL, merge_partials, window_partials

    rng = np.random.default_rng(4)
    rows = 3000
    routed = pd.DataFrame({
        "run_id": rng.choice(["r", "s"], rows), "key": rng.choice(list("abcdefgh"), rows),
        "count": rng.integers(1, 5, rows), "worker": rng.integers(0, 4, rows).astype("int32"),
        "event_time_ms": rng.integers(0, 100_000, rows),
    })  # fmt: skip
    # Three read tasks, each reducing its own slice: the same keys recur across them.
    pieces = [window_partials(pa.Table.from_pandas(routed.iloc[start:start + 1000],
                                                   preserve_index=False), 15_000)
              for start in range(0, rows, 1000)]  # fmt: skip
    frame = spark.createDataFrame(pa.concat_tables(pieces).to_pandas(), PARTIALS_DDL)
    actual = merge_partials(frame, 15_000).toPandas()
    expected = worker_window_partials(routed, 15_000)
    assert list(actual.columns) == list(expected.columns)
    assert sum(p.num_rows for p in pieces) > len(expected)  # the merge had work to do
    order = ["run_id", "window_start_ms", "worker", "key"]
    pd.testing.assert_frame_equal(actual.sort_values(order).reset_index(drop=True),
                                  expected.sort_values(order).reset_index(drop=True),
                                  check_dtype=False)  # fmt: skip
