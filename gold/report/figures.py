"""The report's charts, drawn with matplotlib's Agg canvas into base64 PNG strings.

Figures are built with the object API (``Figure`` + ``FigureCanvasAgg``), never
pyplot, so nothing touches global state or needs a display. A run keeps one
colour in every chart. PNGs carry no timestamp, so the same data gives the same
bytes.
"""

from __future__ import annotations

import base64
import io
import math
from collections.abc import Sequence
from typing import Any

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from gold.report.data import ReportData

__all__ = ["render_figures"]

_DPI = 100
_PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
            "#7f7f7f", "#bcbd22", "#17becf")  # fmt: skip


def _colour(index: int) -> str:
    return _PALETTE[index % len(_PALETTE)]


def _png(figure: Figure) -> str:
    FigureCanvasAgg(figure)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=_DPI, metadata={"Software": None})
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def _grid(count: int, width: float = 5.0, height: float = 3.2) -> tuple[Figure, list[Any]]:
    columns = min(count, 3)
    rows = math.ceil(count / columns)
    figure = Figure(figsize=(width * columns, height * rows), layout="constrained")
    axes = figure.subplots(rows, columns, squeeze=False).ravel().tolist()
    for unused in axes[count:]:
        unused.set_visible(False)
    return figure, axes[:count]


def _worker_load(data: ReportData) -> str:
    figure, axes = _grid(len(data.worker_load))
    for index, (ax, run) in enumerate(zip(axes, data.worker_load, strict=True)):
        tuples = run["tuples"]
        ax.bar(range(len(tuples)), tuples, color=_colour(index), width=0.8)
        mean = sum(tuples) / len(tuples) if tuples else 0
        ax.axhline(mean, color="black", linestyle="--", linewidth=1)
        ax.set_title(f"{run['label']} (W={len(tuples)}, mean {mean:,.0f})")
        ax.set_xlabel("worker")
        ax.set_ylabel("tuples")
        ax.xaxis.get_major_locator().set_params(integer=True)
        ax.grid(axis="y", alpha=0.3)
    figure.suptitle("Load per worker over the whole run (dashed line: the even share)")
    return _png(figure)


def _origin(series: Sequence[int]) -> int:
    return min(series) if series else 0


def _imbalance(data: ReportData) -> str:
    figure = Figure(figsize=(10, 4.5), layout="constrained")
    ax = figure.subplots()
    for index, run in enumerate(data.imbalance):
        start = _origin(run["window_start_ms"])
        minutes = [(t - start) / 60_000 for t in run["window_start_ms"]]
        values = [math.nan if v is None else v for v in run["imbalance"]]
        ax.plot(minutes, values, marker="o", markersize=3, color=_colour(index), label=run["label"])
    ax.set_title("Imbalance per window: (max load - mean load) / tuples")
    ax.set_xlabel("window start (minutes of event time since the run's first window)")
    ax.set_ylabel("imbalance")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.legend(loc="best", fontsize="small")
    return _png(figure)


def _dist_cost(data: ReportData) -> str:
    figure = Figure(figsize=(8, 5), layout="constrained")
    ax = figure.subplots()
    for index, run in enumerate(data.dist_cost):
        if run["imbalance"] is None or run["dist_cost"] is None:
            continue
        ax.scatter(run["imbalance"], run["dist_cost"], s=60, color=_colour(index),
                   label=run["label"], zorder=3)  # fmt: skip
        ax.annotate(run["label"], (run["imbalance"], run["dist_cost"]), fontsize="small",
                    xytext=(5, 5), textcoords="offset points")  # fmt: skip
    ax.margins(0.2)  # room for the labels next to the points
    ax.set_title("Replication cost against imbalance (whole run)")
    ax.set_xlabel("imbalance (lower is better balanced)")
    ax.set_ylabel("dist_cost: workers per key (lower is cheaper to merge)")
    ax.grid(alpha=0.3)
    ax.legend(loc="best", fontsize="small")
    return _png(figure)


def _draw_pools(ax: Any, run: dict[str, Any], windows: Sequence[int]) -> None:
    snapshots = [t for key in run["keys"] for t in key["as_of_ms"]]
    start = _origin(windows or snapshots)
    # The whole run on the x axis, not just the snapshots: a finite run may
    # snapshot its pools only once, at the end.
    last = max([*windows, *snapshots])
    ax.set_xlim(0, max((last - start) / 60_000 * 1.05, 1.0))
    for key in run["keys"]:
        minutes = [(t - start) / 60_000 for t in key["as_of_ms"]]
        ax.step(minutes, key["pool_size"], where="post", marker="o", markersize=4,
                label=key["key"])  # fmt: skip
    shown = len(run["keys"])
    more = f", {shown} of {run['total_keys']} hot keys" if run["total_keys"] > shown else ""
    ax.set_title(f"{run['label']}{more}")
    ax.set_xlabel("event time (minutes since the run's first window)")
    ax.set_ylabel("pool size (workers)")
    ax.set_ylim(0, max(max(key["pool_size"]) for key in run["keys"]) + 1)
    ax.yaxis.get_major_locator().set_params(integer=True)
    ax.grid(alpha=0.3)
    ax.legend(loc="best", fontsize="x-small", title="key", title_fontsize="x-small")


def _hot_keys(data: ReportData) -> str | None:
    runs = [run for run in data.hot_keys if run["keys"]]
    if not runs:
        return None
    windows = {r["run_id"]: r["window_start_ms"] for r in data.imbalance}
    figure, axes = _grid(len(runs), width=5.5, height=3.5)
    for ax, run in zip(axes, runs, strict=True):
        _draw_pools(ax, run, windows.get(run["run_id"], []))
    figure.suptitle("Hot keys' pool sizes over time (largest pool over the splitters)")
    return _png(figure)


def render_figures(data: ReportData) -> dict[str, str | None]:
    """Base64 PNGs by chart name; ``hot_keys`` is None when no run had a hot key."""
    return {
        "worker_load": _worker_load(data),
        "imbalance": _imbalance(data),
        "dist_cost": _dist_cost(data),
        "hot_keys": _hot_keys(data),
    }
