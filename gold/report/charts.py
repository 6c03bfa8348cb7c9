"""The report's charts as Vega-Lite specs: plain JSON-ready dicts built from the figure data.

Every chart filters its rows by the page's run picker (:mod:`gold.report.encodings`).
Continuous axes zoom and pan (wheel, drag; double click resets), every mark has
a tooltip with its exact values, and event times are drawn as UTC dates. The
queue model's charts (latency, capacity, utilisation, busy time) live in
:mod:`gold.report.queue_charts`, the dist_cost scatter in :mod:`gold.report.scatter`.
"""

from __future__ import annotations

from typing import Any

from gold.report.data import WINDOW_METRICS, ReportData
from gold.report.encodings import base, run_colour, run_colours, time_axis, utc, zoom
from gold.report.queue_charts import queue_charts
from gold.report.scatter import dist_cost_chart

__all__ = ["render_charts"]


def _worker_load(data: ReportData, run_ids: list[str]) -> dict[str, Any]:
    rows = []
    for run in data.worker_load:
        total = sum(run["tuples"])
        mean = total / len(run["tuples"]) if run["tuples"] else 0.0
        rows += [{"run_id": run["run_id"], "label": run["label"], "worker": w, "tuples": t,
                  "share_pct": 100 * t / total if total else 0.0, "even": mean}
                 for w, t in enumerate(run["tuples"])]  # fmt: skip
    colour = run_colour(data)
    bars = {"mark": {"type": "bar"}, "params": [zoom("zoom_load", ["y"])],
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
    return base(rows, run_ids, layer=[bars, even])


def _windows(data: ReportData, run_ids: list[str]) -> dict[str, Any]:
    rows = []
    for run in data.windows:
        for i, start in enumerate(run["window_start_ms"]):
            rows.append({"run_id": run["run_id"], "label": run["label"], "time": start,
                         "window": utc(start), **{m: run[m][i] for m in WINDOW_METRICS}})  # fmt: skip
    metric = {
        "name": "metric",
        "value": WINDOW_METRICS[0],
        "bind": {"input": "select", "options": list(WINDOW_METRICS), "name": "metric "},
    }
    return base(
        rows, run_ids,
        mark={"type": "line", "point": {"size": 60, "filled": True}},
        params=[metric, zoom("zoom_windows", ["x", "y"])],
        encoding={"x": time_axis(),
                  "y": {"field": "value", "type": "quantitative", "title": "value",
                        "axis": {"title": {"expr": "metric"}}},
                  "color": run_colour(data),
                  "tooltip": [{"field": "label", "title": "run"}, {"field": "window"},
                              {"field": "metric"}, {"field": "value", "format": ".6~g"}]},
        transform=[{"calculate": "datum[metric]", "as": "value"}, {"calculate": "metric", "as": "metric"}],
    )  # fmt: skip


def _pool_chart(run: dict[str, Any], colour: str, run_ids: list[str]) -> dict[str, Any]:
    """Pool size per hot key: over time, or as bars when the run has one snapshot only."""
    order = [key["key"] for key in run["keys"]]
    pool = {"field": "pool_size", "type": "quantitative", "title": "pool size (workers)",
            "axis": {"tickMinStep": 1}}  # fmt: skip
    tooltip = [{"field": "key"}, {"field": "pool_size", "title": "pool size"}, {"field": "as_of"}]
    if run["snapshots"] > 1:
        rows = [{"run_id": run["run_id"], "key": key["key"], "pool_size": size, "time": t,
                 "as_of": utc(t)}
                for key in run["keys"]
                for t, size in zip(key["as_of_ms"], key["pool_size"], strict=True)]  # fmt: skip
        return base(rows, run_ids,
                    mark={"type": "line", "interpolate": "step-after", "point": {"size": 50}},
                    params=[zoom("zoom_pools", ["x", "y"])],
                    encoding={"x": time_axis("event time (UTC)"),
                              "y": pool, "tooltip": tooltip,
                              "color": {"field": "key", "type": "nominal", "sort": order,
                                        "legend": {"labelLimit": 200}}})  # fmt: skip
    # A finite run that routes its messages in one micro-batch snapshots each
    # splitter's pools once, at the end: one point per key is no time series.
    rows = []
    for key in run["keys"]:
        size, t = max(zip(key["pool_size"], key["as_of_ms"], strict=True))
        rows.append(
            {"run_id": run["run_id"], "key": key["key"], "pool_size": size, "as_of": utc(t)}
        )
    return base(rows, run_ids, mark={"type": "bar", "color": colour},
                encoding={"x": {"field": "key", "type": "nominal", "sort": order,
                                "title": "hot key (largest pools first)", "axis": {"labelAngle": -35}},
                          "y": pool, "tooltip": tooltip})  # fmt: skip


def render_charts(data: ReportData) -> dict[str, Any]:
    """Vega-Lite specs by chart name; ``hot_keys`` maps each run with a hot key to its chart.

    The busy-time charts are there only when a run has ``gold.worker_busy`` rows.
    """
    run_ids = [row["run_id"] for row in data.summary]
    colours = run_colours(data)
    pools = {run["run_id"]: _pool_chart(run, colours[run["run_id"]], run_ids)
             for run in data.hot_keys if run["keys"]}  # fmt: skip
    return {
        **queue_charts(data, run_ids),
        "worker_load": _worker_load(data, run_ids),
        "windows": _windows(data, run_ids),
        "dist_cost": dist_cost_chart(data, run_ids),
        "hot_keys": pools,
    }
