"""Gold tables from silver's routed rows (pure pandas, one run at a time).

The WorkerBolt's partials are merged across workers per key and aggregation
window (the AggregatorBolt), loads are counted per worker and window, and the
distribution metrics come from the same accumulator ``dkg simulate`` uses, so
gold's numbers equal the simulator's for the same routing.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from gold.metrics import RunMetricsAccumulator
from silver.groupings.hashing import hash_keys

__all__ = ["add_routed", "distribution_metrics", "key_counts", "metrics_frame", "worker_load"]


def _coarsen(partials: pd.DataFrame, window_ms: int) -> pd.DataFrame:
    # Worker windows (15 s) nest in aggregation windows (60 s): re-bucket their starts.
    start = partials["window_start_ms"] // window_ms * window_ms
    return partials.assign(window_start_ms=start, window_end_ms=start + window_ms)


def key_counts(partials: pd.DataFrame, window_ms: int = 60_000) -> pd.DataFrame:
    """Per run, window and key: the merged count, its tuples and how many workers held partials.

    Args:
        partials: ``silver.worker_windows`` rows (run_id, window_start_ms, worker,
            key, count, tuples).
        window_ms: the aggregation window (a multiple of the worker window).
    """
    grouped = _coarsen(partials, window_ms).groupby(
        ["run_id", "window_start_ms", "window_end_ms", "key"], sort=True
    )
    return grouped.agg(count=("count", "sum"), tuples=("tuples", "sum"),
                       workers=("worker", "nunique")).reset_index()  # fmt: skip


def worker_load(partials: pd.DataFrame, workers: int, window_ms: int = 60_000) -> pd.DataFrame:
    """Per run, window and worker (all W; idle ones with 0): tuples and distinct keys."""
    frame = _coarsen(partials, window_ms)
    loads = frame.groupby(["run_id", "window_start_ms", "worker"]).agg(
        tuples=("tuples", "sum"), keys=("key", "nunique")
    )
    windows = frame[["run_id", "window_start_ms"]].drop_duplicates()
    every = windows.merge(pd.DataFrame({"worker": range(workers)}), how="cross")
    table = every.merge(loads.reset_index(), how="left").fillna({"tuples": 0, "keys": 0})
    return table.astype({"worker": "int32", "tuples": "int64", "keys": "int64"})


_STREAM_ORDER = ("event_time_ms", "partition", "offset", "tuple_index")


def add_routed(accumulator: RunMetricsAccumulator, routed: pd.DataFrame) -> None:
    """Add routed rows to ``accumulator`` in stream order (event time, partition, offset, tuple).

    Tuples are fed in the order the routing step saw them, so the FIFO queue
    model matches the simulator's.
    """
    routed = routed[routed["worker"] >= 0]
    if routed.empty:
        return
    # numpy's lexsort on the integer columns: pandas' multi-column sort factorizes each one.
    order = np.lexsort([routed[name].to_numpy(np.int64) for name in reversed(_STREAM_ORDER)])
    accumulator.add(hash_keys(routed["key"].to_numpy(object)[order]).fingerprint,
                    routed["worker"].to_numpy(np.int64)[order],
                    routed["event_time_ms"].to_numpy(np.int64)[order])  # fmt: skip


def metrics_frame(accumulator: RunMetricsAccumulator, processing_seconds: float) -> pd.DataFrame:
    """The accumulator's metrics so far: one cumulative row, then one row per window."""
    result = accumulator.result(processing_seconds)
    rows = [result.cumulative.to_dict(), *(w.to_dict() for w in result.windows)]
    frame = pd.DataFrame(rows).drop(columns=["loads"])
    return frame.astype({"window_start_ms": "Int64"})


def distribution_metrics(
    routed: pd.DataFrame, workers: int, processing_seconds: float, window_ms: int = 60_000,
    process_ms: float = 1.0, speed: float = 1.0,
) -> pd.DataFrame:  # fmt: skip
    """One cumulative row and one row per window for one run's routed rows."""
    accumulator = RunMetricsAccumulator(workers, window_ms, process_ms, speed)
    add_routed(accumulator, routed)
    return metrics_frame(accumulator, processing_seconds)
