"""The report's charts as Vega-Lite specs: plain JSON-ready dicts built from the figure data.

Every chart filters its rows by the page's run picker through one Vega
parameter, ``picked`` (the run ids shown), which the page sets on each view;
a run keeps one colour in every chart, whichever runs are picked. Continuous
axes zoom and pan (wheel, drag; double click resets) and every mark has a
tooltip with its exact values.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from gold.report.data import WINDOW_METRICS, ReportData

__all__ = ["PICKED", "render_charts", "run_colours"]

PICKED = "picked"
"""The Vega parameter holding the ids of the runs the picker shows."""

_PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
            "#7f7f7f", "#bcbd22", "#17becf")  # fmt: skip
_HEIGHT = 300
_MINUTES = "minutes since the run's first window"


def run_colours(data: ReportData) -> dict[str, str]:
    """One colour per run id, in report order (the palette repeats past ten runs)."""
    return {row["run_id"]: _PALETTE[i % len(_PALETTE)] for i, row in enumerate(data.summary)}


def _base(rows: list[dict[str, Any]], run_ids: list[str], params: Sequence[dict[str, Any]] = (),
          transform: Sequence[dict[str, Any]] = (), **spec: Any) -> dict[str, Any]:  # fmt: skip
    """A chart as wide as its box, its rows filtered by the picker (``picked``)."""
    return {"width": "container", "height": _HEIGHT,
            "autosize": {"type": "fit", "contains": "padding"},
            "params": [{"name": PICKED, "value": run_ids}, *params],
            "data": {"values": rows},
            "transform": [{"filter": f"indexof({PICKED}, datum.run_id) >= 0"}, *transform],
            **spec}  # fmt: skip


def _run_colour(data: ReportData) -> dict[str, Any]:
    colours = run_colours(data)
    return {"field": "label", "type": "nominal", "title": "run",
            "scale": {"domain": [r["label"] for r in data.summary],
                      "range": [colours[r["run_id"]] for r in data.summary]},
            "legend": {"labelLimit": 360}}  # fmt: skip


def _zoom(name: str, encodings: list[str]) -> dict[str, Any]:
    return {"name": name, "select": {"type": "interval", "encodings": encodings},
            "bind": "scales"}  # fmt: skip


def _minutes() -> dict[str, Any]:
    # A little room at both ends, so the first and last points are not cut by the axes.
    return {"field": "minute", "type": "quantitative", "title": _MINUTES,
            "scale": {"nice": False, "padding": 12}}  # fmt: skip


def _utc(ms: int) -> str:
    return pd.Timestamp(ms, unit="ms", tz="UTC").strftime("%Y-%m-%d %H:%M:%S UTC")


def _worker_load(data: ReportData, run_ids: list[str]) -> dict[str, Any]:
    rows = []
    for run in data.worker_load:
        total = sum(run["tuples"])
        mean = total / len(run["tuples"]) if run["tuples"] else 0.0
        rows += [{"run_id": run["run_id"], "label": run["label"], "worker": w, "tuples": t,
                  "share_pct": 100 * t / total if total else 0.0, "even": mean}
                 for w, t in enumerate(run["tuples"])]  # fmt: skip
    colour = _run_colour(data)
    bars = {"mark": {"type": "bar"}, "params": [_zoom("zoom_load", ["y"])],
            "encoding": {"x": {"field": "worker", "type": "ordinal", "title": "worker",
                               "axis": {"labelAngle": 0}},
                         "xOffset": {"field": "label"}, "y": {"field": "tuples", "type": "quantitative", "title": "tuples"},
                         "color": colour,
                         "tooltip": [{"field": "label", "title": "run"}, {"field": "worker"},
                                     {"field": "tuples", "format": ","},
                                     {"field": "share_pct", "title": "share %", "format": ".2f"}]}}  # fmt: skip
    even = {"mark": {"type": "rule", "strokeDash": [6, 4]},
            "encoding": {"y": {"field": "even", "aggregate": "max"},
                         "color": colour, "detail": {"field": "run_id"},
                         "tooltip": [{"field": "label", "title": "run"},
                                     {"field": "even", "aggregate": "max", "title": "even share",
                                      "format": ",.1f"}]}}  # fmt: skip
    return _base(rows, run_ids, layer=[bars, even])


def _windows(data: ReportData, run_ids: list[str]) -> dict[str, Any]:
    rows = []
    for run in data.windows:
        starts = run["window_start_ms"]
        for i, start in enumerate(starts):
            rows.append({"run_id": run["run_id"], "label": run["label"],
                         "minute": (start - starts[0]) / 60_000, "window": _utc(start),
                         **{m: run[m][i] for m in WINDOW_METRICS}})  # fmt: skip
    metric = {
        "name": "metric",
        "value": WINDOW_METRICS[0],
        "bind": {"input": "select", "options": list(WINDOW_METRICS), "name": "metric "},
    }
    return _base(
        rows, run_ids,
        mark={"type": "line", "point": {"size": 60, "filled": True}},
        params=[metric, _zoom("zoom_windows", ["x", "y"])],
        encoding={"x": _minutes(),
                  "y": {"field": "value", "type": "quantitative", "title": "value",
                        "axis": {"title": {"expr": "metric"}}},
                  "color": _run_colour(data),
                  "tooltip": [{"field": "label", "title": "run"}, {"field": "window"},
                              {"field": "minute", "format": ".1f"},
                              {"field": "metric"}, {"field": "value", "format": ".6~g"}]},
        transform=[{"calculate": "datum[metric]", "as": "value"}, {"calculate": "metric", "as": "metric"}],
    )  # fmt: skip


def _dist_cost(data: ReportData, run_ids: list[str]) -> dict[str, Any]:
    rows = [r for r in data.dist_cost if r["imbalance"] is not None and r["dist_cost"] is not None]
    # Room around the points for their names, which zooming clips at the plot's edge.
    x = {"field": "imbalance", "type": "quantitative", "title": "imbalance (lower: better balanced)",
         "scale": {"padding": 70}, "axis": {"labelExpr": "datum.value < 0 ? '' : datum.label"}}  # fmt: skip
    y = {"field": "dist_cost", "type": "quantitative", "title": "dist_cost (workers per key)",
         "scale": {"zero": False, "padding": 30}}  # fmt: skip
    tooltip = [{"field": "label", "title": "run"}, {"field": "imbalance", "format": ".6~g"},
               {"field": "dist_cost", "format": ".6~g"}]  # fmt: skip
    points = {
        "mark": {"type": "point", "size": 160, "filled": True},
        "params": [_zoom("zoom_cost", ["x", "y"])],
        "encoding": {"x": x, "y": y, "color": _run_colour(data), "tooltip": tooltip},
    }
    names = {
        "mark": {"type": "text", "align": "center", "dy": -15},
        "encoding": {"x": x, "y": y, "text": {"field": "label"}, "tooltip": tooltip},
    }
    return _base(rows, run_ids, layer=[points, names])


def _pool_chart(run: dict[str, Any], start: int, colour: str, run_ids: list[str]) -> dict[str, Any]:
    """Pool size per hot key: over time, or as bars when the run has one snapshot only."""
    order = [key["key"] for key in run["keys"]]
    pool = {"field": "pool_size", "type": "quantitative", "title": "pool size (workers)",
            "axis": {"tickMinStep": 1}}  # fmt: skip
    tooltip = [{"field": "key"}, {"field": "pool_size", "title": "pool size"}, {"field": "as_of"}]
    if run["snapshots"] > 1:
        rows = [{"run_id": run["run_id"], "key": key["key"], "pool_size": size,
                 "minute": (t - start) / 60_000, "as_of": _utc(t)}
                for key in run["keys"]
                for t, size in zip(key["as_of_ms"], key["pool_size"], strict=True)]  # fmt: skip
        return _base(rows, run_ids,
                     mark={"type": "line", "interpolate": "step-after", "point": {"size": 50}},
                     params=[_zoom("zoom_pools", ["x", "y"])],
                     encoding={"x": _minutes(),
                               "y": pool, "tooltip": tooltip,
                               "color": {"field": "key", "type": "nominal", "sort": order,
                                         "legend": {"labelLimit": 200}}})  # fmt: skip
    # A finite run that routes its messages in one micro-batch snapshots each
    # splitter's pools once, at the end: one point per key is no time series.
    rows = []
    for key in run["keys"]:
        size, t = max(zip(key["pool_size"], key["as_of_ms"], strict=True))
        rows.append(
            {"run_id": run["run_id"], "key": key["key"], "pool_size": size, "as_of": _utc(t)}
        )
    return _base(rows, run_ids, mark={"type": "bar", "color": colour},
                 encoding={"x": {"field": "key", "type": "nominal", "sort": order,
                                 "title": "hot key (largest pools first)", "axis": {"labelAngle": -35}},
                           "y": pool, "tooltip": tooltip})  # fmt: skip


def render_charts(data: ReportData) -> dict[str, Any]:
    """Vega-Lite specs by chart name; ``hot_keys`` maps each run with a hot key to its chart."""
    run_ids = [row["run_id"] for row in data.summary]
    windows = {r["run_id"]: r["window_start_ms"] for r in data.windows}
    colours = run_colours(data)
    pools = {}
    for run in (r for r in data.hot_keys if r["keys"]):
        start = min(windows[run["run_id"]] or [t for key in run["keys"] for t in key["as_of_ms"]])
        pools[run["run_id"]] = _pool_chart(run, start, colours[run["run_id"]], run_ids)
    return {
        "worker_load": _worker_load(data, run_ids),
        "windows": _windows(data, run_ids),
        "dist_cost": _dist_cost(data, run_ids),
        "hot_keys": pools,
    }
