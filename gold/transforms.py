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

__all__ = ["distribution_metrics", "key_counts", "worker_load"]


def _windowed(routed: pd.DataFrame, window_ms: int) -> pd.DataFrame:
    parsed = routed[routed["worker"] >= 0]
    start = parsed["event_time_ms"].astype("int64") // window_ms * window_ms
    return parsed.assign(window_start_ms=start, window_end_ms=start + window_ms)


def key_counts(routed: pd.DataFrame, window_ms: int = 60_000) -> pd.DataFrame:
    """Per run, window and key: the merged count, its tuples and how many workers held partials."""
    frame = _windowed(routed, window_ms)
    grouped = frame.groupby(["run_id", "window_start_ms", "window_end_ms", "key"], sort=True)
    return grouped.agg(count=("count", "sum"), tuples=("count", "size"),
                       workers=("worker", "nunique")).reset_index()  # fmt: skip


def worker_load(routed: pd.DataFrame, workers: int, window_ms: int = 60_000) -> pd.DataFrame:
    """Per run, window and worker (all W, idle ones with 0): tuples and distinct keys."""
    frame = _windowed(routed, window_ms)
    loads = frame.groupby(["run_id", "window_start_ms", "worker"]).agg(
        tuples=("key", "size"), keys=("key", "nunique")
    )
    full = pd.MultiIndex.from_product(
        [*(loads.index.levels[:2] if len(loads) else ([], [])), range(workers)],
        names=["run_id", "window_start_ms", "worker"],
    )
    present = frame[["run_id", "window_start_ms"]].drop_duplicates()
    table = loads.reindex(full, fill_value=0).reset_index()
    table = table.merge(present, on=["run_id", "window_start_ms"])
    return table.astype({"worker": "int32", "tuples": "int64", "keys": "int64"})


def distribution_metrics(
    routed: pd.DataFrame, workers: int, processing_seconds: float, window_ms: int = 60_000,
    process_ms: float = 1.0, speed: float = 1.0,
) -> pd.DataFrame:  # fmt: skip
    """One cumulative row and one row per window for one run's routed rows.

    Tuples are fed in stream order (partition, offset, tuple) like the routing
    step saw them, so the FIFO queue model matches the simulator's.
    """
    parsed = routed[routed["worker"] >= 0].sort_values(
        ["event_time_ms", "partition", "offset", "tuple_index"], kind="stable"
    )
    accumulator = RunMetricsAccumulator(workers, window_ms, process_ms, speed)
    if len(parsed):
        accumulator.add(hash_keys(parsed["key"].to_numpy(object)).fingerprint,
                        parsed["worker"].to_numpy(np.int64),
                        parsed["event_time_ms"].to_numpy(np.int64))  # fmt: skip
    result = accumulator.result(processing_seconds)
    rows = [result.cumulative.to_dict(), *(w.to_dict() for w in result.windows)]
    frame = pd.DataFrame(rows).drop(columns=["loads"])
    return frame.astype({"window_start_ms": "Int64"})
