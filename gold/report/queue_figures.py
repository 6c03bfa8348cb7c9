"""The queue model's figure data: capacity, the busiest worker's utilisation, measured busy time.

Pure pandas like :mod:`gold.report.data`, which calls these builders; each
returns plain JSON-ready dicts, one per run in report order. In the queue model
tuples arrive at event time / ``speed`` and each worker serves one in
``process_ms``, so a worker that gets ``n`` tuples of a ``window_ms`` window is
busy ``n * process_ms / (window_ms / speed)`` of that window's wall time: at 1
or more it falls behind and its tuples' waits grow.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from core.config import RunConfig

__all__ = ["DEFAULT_WINDOW_MS", "busy_time", "capacities", "offered_rate", "plain", "utilisation",
           "window_spacing"]  # fmt: skip

DEFAULT_WINDOW_MS = RunConfig().aggregation_window_ms
"""The aggregation window assumed when no shown run has two windows to measure it by."""


def plain(value: Any) -> Any:
    """numpy scalars to Python ones; NaN and missing values to None (JSON has no NaN)."""
    if value is None or value is pd.NA or value is pd.NaT:
        return None
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def offered_rate(load: float | None, workers: int, process_ms: float | None) -> float | None:
    """Tuples per second arriving at the run's ``load`` (``load x W x 1000 / process_ms``).

    None when either is unknown (a live topic's run has no load).
    """
    if load is None or process_ms is None or process_ms <= 0:
        return None
    return load * workers * 1000.0 / process_ms


def window_spacing(starts: Mapping[str, Sequence[int]]) -> dict[str, int]:
    """Each run's aggregation window in ms: the smallest gap between its window starts.

    A window without tuples has no row, so the smallest gap, not the first, is
    the window. A run with a single window borrows the smallest gap of the
    other runs shown (one warehouse, one setting), else :data:`DEFAULT_WINDOW_MS`.
    """
    gaps = {}
    for run, values in starts.items():
        ordered = sorted(set(values))
        gaps[run] = min((b - a for a, b in itertools.pairwise(ordered)), default=None)
    known = [gap for gap in gaps.values() if gap]
    fallback = min(known, default=DEFAULT_WINDOW_MS)
    return {run: gap or fallback for run, gap in gaps.items()}


def _busiest(worker_load: pd.DataFrame) -> pd.DataFrame:
    """Per (run, window): the worker with the most tuples (the lowest id on ties) and its tuples."""
    per = worker_load.groupby(["run_id", "window_start_ms", "worker"], as_index=False)["tuples"].sum()
    per = per.sort_values(["run_id", "window_start_ms", "tuples", "worker"],
                          ascending=[True, True, False, True], kind="stable")  # fmt: skip
    return per.drop_duplicates(["run_id", "window_start_ms"])


def utilisation(summary: pd.DataFrame, worker_load: pd.DataFrame,
                windows: list[dict[str, Any]]) -> list[dict[str, Any]]:  # fmt: skip
    """Per run and window: the busiest worker, its tuples and its utilisation in the queue model.

    ``utilisation`` is ``tuples * process_ms * speed / window_ms``, None per window
    when ``gold.runs`` does not give the run's ``speed`` and ``process_ms``.
    """
    peak = _busiest(worker_load[worker_load["run_id"].isin(summary["run_id"])])
    starts = {r["run_id"]: list(r["window_start_ms"]) for r in windows}
    for run_id, start in peak[["run_id", "window_start_ms"]].itertuples(index=False):
        starts.setdefault(run_id, []).append(int(start))
    spacing = window_spacing(starts)
    out = []
    for row in summary.to_dict("records"):
        run_id = row["run_id"]
        rows = peak[peak["run_id"] == run_id].sort_values("window_start_ms")
        speed, process_ms = plain(row.get("speed")), plain(row.get("process_ms"))
        window_ms = spacing.get(run_id, DEFAULT_WINDOW_MS)
        tuples = [int(t) for t in rows["tuples"]]
        # Busy ms over the window's wall-clock ms, in this order: a worker exactly at 1 stays 1.
        busy = [t * process_ms * speed / window_ms if speed and process_ms else None
                for t in tuples]  # fmt: skip
        out.append({"run_id": run_id, "label": row["label"], "window_ms": int(window_ms),
                    "window_start_ms": [int(v) for v in rows["window_start_ms"]],
                    "worker": [int(w) for w in rows["worker"]], "tuples": tuples,
                    "utilisation": busy})  # fmt: skip
    return out


def capacities(summary: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per run: ``capacity``, ``capacity_vs_key`` and the arrival rate it was measured at.

    Args:
        summary: The report's plain summary rows (cumulative metrics and run settings).
    """
    return [{"run_id": row["run_id"], "label": row["label"], "grouping": row["grouping"],
             "capacity": row["capacity"], "capacity_vs_key": row["capacity_vs_key"],
             "load": row.get("load"),
             "offered_per_s": offered_rate(row.get("load"), row["workers"], row.get("process_ms"))}
            for row in summary]  # fmt: skip


def busy_time(summary: pd.DataFrame, busy: pd.DataFrame | None) -> list[dict[str, Any]]:
    """Per run with ``gold.worker_busy`` rows (physical mode only): busy seconds per worker and batch.

    ``busy_s``/``tuples`` are per worker, summed over micro-batches. Per batch,
    ``critical_s`` is the busiest worker's seconds (the batch waits for it),
    ``mean_s`` the workers' mean (what a perfect balance would take) and
    ``wall_s`` the longest task's wall-clock seconds.
    """
    if busy is None or not len(busy):
        return []
    out = []
    for run_id, label, workers in summary[["run_id", "label", "workers"]].itertuples(index=False):
        rows = busy[busy["run_id"] == run_id]
        if not len(rows):
            continue
        width = max(int(workers), int(rows["worker"].max()) + 1)
        per_worker = rows.groupby("worker")[["busy_s", "tuples"]].sum().reindex(range(width),
                                                                                fill_value=0)  # fmt: skip
        per_batch = rows.groupby("batch_id").agg(critical_s=("busy_s", "max"),
                                                 total_s=("busy_s", "sum"),
                                                 wall_s=("wall_s", "max")).sort_index()  # fmt: skip
        out.append({"run_id": run_id, "label": label,
                    "busy_s": [float(v) for v in per_worker["busy_s"]],
                    "tuples": [int(v) for v in per_worker["tuples"]],
                    "batch_id": [int(v) for v in per_batch.index],
                    "critical_s": [float(v) for v in per_batch["critical_s"]],
                    "mean_s": [float(v) / width for v in per_batch["total_s"]],
                    "wall_s": [plain(v) for v in per_batch["wall_s"]]})  # fmt: skip
    return out
