"""Per-worker tumbling-window partial counts: the WorkerBolt, as a table.

Each micro-batch of ``silver.routed`` is reduced to partials per
(run, window, worker, key) and merged into ``silver.worker_windows`` by adding
to the stored partials, in one Delta commit that also records the batch id: a
replayed batch is skipped, so every tuple is counted exactly once. Windows are
updated as tuples arrive (no watermark wait), so a finite run never leaves a
window behind.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import functions as F

from core.profiling import timed
from core.tables.base import TableBackend, TablePath

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = ["PARTIALS_DDL", "WINDOW_INPUT", "WINDOW_KEYS", "aggregate_worker_windows",
           "merge_partials", "window_partials", "worker_window_partials",
           "worker_windows_writer"]  # fmt: skip

WINDOW_KEYS = ["run_id", "window_start_ms", "worker", "key"]
# What the windows need of a routed tuple.
WINDOW_INPUT = ("run_id", "event_time_ms", "worker", "key", "count")
# Partials of some of a micro-batch's tuples (see :func:`window_partials`).
PARTIALS_DDL = "run_id STRING, window_start_ms LONG, worker INT, key STRING, count LONG, tuples LONG"


def worker_window_partials(routed: pd.DataFrame, window_ms: int) -> pd.DataFrame:
    """Sum of counts and number of tuples per (run, window, worker, key)."""
    if routed.empty:
        return pd.DataFrame(columns=[*WINDOW_KEYS, "window_end_ms", "count", "tuples"])
    start = routed["event_time_ms"].astype("int64") // window_ms * window_ms
    frame = routed.assign(window_start_ms=start)
    partials = (
        frame.groupby(WINDOW_KEYS, sort=True)
        .agg(count=("count", "sum"), tuples=("count", "size"))
        .reset_index()
    )
    partials["window_end_ms"] = partials["window_start_ms"] + window_ms
    return partials.astype({"worker": "int32", "count": "int64", "tuples": "int64"})


def window_partials(routed: pa.Table, window_ms: int) -> pa.Table:
    """Sum of counts and number of tuples per (run, window, worker, key), in Arrow.

    The ``PARTIALS_DDL`` columns; :func:`merge_partials` adds up partials of the
    same key from several tasks.
    """
    starts = routed["event_time_ms"].to_numpy(zero_copy_only=False) // window_ms * window_ms
    table = pa.table({"run_id": routed["run_id"], "window_start_ms": pa.array(starts, pa.int64()),
                      "worker": routed["worker"].cast(pa.int32()), "key": routed["key"],
                      "count": routed["count"].cast(pa.int64())})  # fmt: skip
    grouped = table.group_by(WINDOW_KEYS, use_threads=False).aggregate(
        [("count", "sum"), ("count", "count", pc.CountOptions(mode="all"))]
    )
    return grouped.rename_columns([*WINDOW_KEYS, "count", "tuples"]).select(
        ["run_id", "window_start_ms", "worker", "key", "count", "tuples"]
    )


def merge_partials(partials: DataFrame, window_ms: int) -> DataFrame:
    """Partials from several tasks (``PARTIALS_DDL``) -> one row per (run, window, worker, key)."""
    merged = partials.groupBy(*WINDOW_KEYS).agg(
        F.sum("count").cast("long").alias("count"), F.sum("tuples").cast("long").alias("tuples")
    )
    end = (F.col("window_start_ms") + window_ms).alias("window_end_ms")
    return merged.select(*WINDOW_KEYS, "count", "tuples", end)


def aggregate_worker_windows(routed: DataFrame, window_ms: int) -> DataFrame:
    """:func:`worker_window_partials` in Spark: only the partials reach the driver.

    A micro-batch holds far fewer (window, worker, key) partials than tuples, so
    reducing before collecting spares the driver most of the transfer.
    """
    start = (F.floor(F.col("event_time_ms") / window_ms) * window_ms).cast("long")
    partials = routed.groupBy("run_id", start.alias("window_start_ms"), "worker", "key").agg(
        F.sum("count").cast("long").alias("count"), F.count(F.lit(1)).alias("tuples")
    )
    # Same column order as the pandas partials, which created existing tables.
    end = (F.col("window_start_ms") + window_ms).alias("window_end_ms")
    return partials.select(*WINDOW_KEYS, "count", "tuples", end)


def worker_windows_writer(backend: TableBackend, path: TablePath, app_id: str, window_ms: int,
                          pre_aggregated: bool = False):  # fmt: skip
    """The ``foreachBatch`` function of the worker-windows query.

    ``pre_aggregated``: the stream holds partials (``PARTIALS_DDL``), not routed tuples.
    """
    combine = merge_partials if pre_aggregated else aggregate_worker_windows

    def write_batch(df, batch_id: int) -> None:
        last = backend.transaction_version(path, app_id)
        if last is not None and last >= batch_id:
            return
        with timed("collect"):
            partials = combine(df, window_ms).toArrow()
        with timed("delta_merge"):
            backend.merge(path, partials, WINDOW_KEYS, app_id, batch_id,
                          accumulate=("count", "tuples"))  # fmt: skip

    return write_batch
