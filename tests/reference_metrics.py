"""Every metric of a run computed from its tuples by the formulas' text: the oracle of the
metrics engine (``gold.metrics``), written without it.

Each worker serves its tuples micro-batch by micro-batch, within one in stream
order (event time, partition, offset, tuple), one at a time:
``done = max(arrival, done) + process_ms``, arrivals at event time / speed.
KEY's worker of a key is murmur3 (the ``mmh3`` library) mod W.
"""

from __future__ import annotations

from typing import Any

import mmh3
import numpy as np
import pandas as pd

__all__ = ["reference_metrics"]

_ORDER = ["batch", "event_time_ms", "partition", "offset", "tuple_index"]


def _served(tuples: pd.DataFrame, process_ms: float, speed: float) -> pd.DataFrame:
    tuples = tuples.sort_values(_ORDER, kind="stable").reset_index(drop=True)
    tuples["arrival"] = (tuples["event_time_ms"] - tuples["event_time_ms"].min()) / speed
    latency, completion = np.full(len(tuples), np.nan), np.full(len(tuples), np.nan)
    for _, served in tuples.groupby("worker", sort=False):
        done = -np.inf
        for index, arrival in zip(served.index.tolist(), served["arrival"].tolist(), strict=True):
            done = max(arrival, done) + process_ms
            latency[index], completion[index] = done - arrival, done
    return tuples.assign(latency=latency, completion=completion)


def reference_metrics(tuples: pd.DataFrame, workers: int, window_ms: int, process_ms: float,
                      speed: float) -> dict[int | None, dict[str, Any]]:  # fmt: skip
    """Each scope's figures (key None: the whole run; else the aggregation window's start).

    Args:
        tuples: routed tuples with ``batch`` (the micro-batch), ``event_time_ms``,
            ``partition``, ``offset``, ``tuple_index``, ``key`` and ``worker``.
        workers: W.
        window_ms: the aggregation window.
        process_ms: service time per tuple.
        speed: event-time speed-up.
    """
    tuples = _served(tuples, process_ms, speed)
    tuples["home"] = [mmh3.hash(k, 0, signed=False) % workers for k in tuples["key"]]
    tuples["window"] = tuples["event_time_ms"] // window_ms * window_ms
    scopes = {None: tuples, **dict(iter(tuples.groupby("window")))}
    out: dict[int | None, dict[str, Any]] = {}
    for scope, rows in scopes.items():
        loads = np.bincount(rows["worker"], minlength=workers).astype(float)
        key_loads = np.bincount(rows["home"], minlength=workers).astype(float)
        total, mean = loads.sum(), loads.mean()
        shares = 100 * loads / total
        out[scope] = {
            "tuples": total, "distinct_keys": rows["key"].nunique(),
            "imbalance": (loads.max() - mean) / total,
            "stddev_pct": float(np.sqrt(((shares - shares.mean()) ** 2).mean())),
            "e_lb": float(np.abs(loads - mean).sum() / total),
            "dist_cost": len(set(zip(rows["key"], rows["worker"], strict=True)))
            / rows["key"].nunique(),
            "p50_ms": float(np.percentile(rows["latency"], 50)),
            "p99_ms": float(np.percentile(rows["latency"], 99)),
            "makespan_ms": float(rows["completion"].max() - rows["arrival"].min()),
            "capacity": 1000 * total / (process_ms * loads.max()),
            "capacity_vs_key": key_loads.max() / loads.max(),
            "loads": tuple(int(v) for v in loads),
        }  # fmt: skip
    return out
