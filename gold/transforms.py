"""Gold tables from the workers' partials (pure pandas, one run at a time).

The WorkerBolt's partials are merged across workers per key and aggregation
window (the AggregatorBolt) and loads are counted per worker and window; the
distribution metrics (:class:`gold.metrics.partials.RunPartials`) equal those of
the accumulator ``dkg simulate`` uses, for the same routing.
"""

from __future__ import annotations

import pandas as pd

from gold.metrics import RunMetrics

__all__ = ["key_counts", "metrics_frame", "worker_load"]


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


def metrics_frame(result: RunMetrics) -> pd.DataFrame:
    """A run's metrics as rows: the cumulative one, then one per window."""
    rows = [result.cumulative.to_dict(), *(w.to_dict() for w in result.windows)]
    frame = pd.DataFrame(rows).drop(columns=["loads"])
    return frame.astype({"window_start_ms": "Int64"})
