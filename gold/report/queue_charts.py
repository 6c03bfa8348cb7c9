"""The queue model's charts: latency over event time, capacity, utilisation, measured busy time.

Vega-Lite specs built from :class:`gold.report.data.ReportData` like the other
charts (:mod:`gold.report.charts`): each filters its rows by the run picker.
"""

from __future__ import annotations

from typing import Any

from gold.report.data import ReportData
from gold.report.encodings import base, run_colour, time_axis, utc, zoom

__all__ = ["queue_charts"]

_PERCENTILES = ("p99", "p50")
"""Drawn solid and dashed, in this order."""

_SERIES = ("critical path", "mean")
"""Per micro-batch: the busiest worker's seconds (solid) and the workers' mean (dashed)."""

_SOLID_DASHED = [[1, 0], [6, 4]]
_RUN = {"field": "label", "title": "run"}


def _dashed_lines(rows: list[dict[str, Any]], run_ids: list[str], colour: dict[str, Any],
                  dashes: tuple[str, tuple[str, ...], str], zoom_name: str,
                  **encoding: Any) -> dict[str, Any]:  # fmt: skip
    """Lines by run (colour) and by ``dashes`` (field, its two values, title): solid, dashed.

    The points are a layer of their own: on the lines' layer they would turn the
    dash legend's symbols into dots.
    """
    field, domain, title = dashes
    dash = {"field": field, "type": "nominal", "title": title,
            "scale": {"domain": list(domain), "range": _SOLID_DASHED},
            "legend": {"symbolType": "stroke", "symbolSize": 500, "symbolStrokeWidth": 2,
                       "symbolStrokeColor": "#333"}}  # fmt: skip
    lines = {"mark": {"type": "line"}, "params": [zoom(zoom_name, ["x", "y"])],
             "encoding": {**encoding, "color": colour, "strokeDash": dash}}  # fmt: skip
    points = {"mark": {"type": "point", "size": 40, "filled": True},
              "encoding": {**encoding, "color": colour, "detail": {"field": field}}}  # fmt: skip
    return base(rows, run_ids, layer=[lines, points])


def _latency(data: ReportData, run_ids: list[str]) -> dict[str, Any]:
    rows = []
    for run in data.windows:
        for i, start in enumerate(run["window_start_ms"]):
            for name in _PERCENTILES:
                value = run[f"{name}_ms"][i]
                # A log axis has no 0: a window without a latency is left out.
                if value is not None and value > 0:
                    rows.append({"run_id": run["run_id"], "label": run["label"], "time": start,
                                 "window": utc(start), "percentile": name, "latency_ms": value})  # fmt: skip
    return _dashed_lines(
        rows, run_ids, run_colour(data), ("percentile", _PERCENTILES, "percentile"),
        "zoom_latency", x=time_axis(),
        # Latencies run from a service time (1 ms) to minutes of backlog.
        y={"field": "latency_ms", "type": "quantitative", "title": "latency (ms, log scale)",
           "scale": {"type": "log"}},
        tooltip=[_RUN, {"field": "window"}, {"field": "percentile"},
                 {"field": "latency_ms", "title": "latency ms", "format": ",.6~g"}],
    )  # fmt: skip


def _capacity(data: ReportData, run_ids: list[str]) -> dict[str, Any]:
    rows = []
    for run in (r for r in data.capacity if r["capacity"] is not None):
        ratio, offered = run["capacity_vs_key"], run["offered_per_s"]
        rows.append({**run, "vs_key": f"{ratio:.2f}x KEY" if ratio is not None else "",
                     "keeps_up": "unknown" if offered is None else
                     ("yes" if run["capacity"] > offered else "no")})  # fmt: skip
    x = {"field": "label", "type": "nominal", "title": None,
         "sort": [r["label"] for r in data.summary], "axis": {"labelAngle": -20, "labelLimit": 220}}  # fmt: skip
    # Room above the tallest bar or tick for the ratios printed over the bars.
    top = max([v for r in rows for v in (r["capacity"], r["offered_per_s"]) if v is not None],
              default=0.0)  # fmt: skip
    y = {"field": "capacity", "type": "quantitative", "title": "capacity (tuples/s)",
         **({"scale": {"domainMax": 1.12 * top}} if top > 0 else {})}  # fmt: skip
    offered = {"field": "offered_per_s", "title": "offered tuples/s", "format": ",.0f"}
    bars = {"mark": {"type": "bar"}, "params": [zoom("zoom_capacity", ["y"])],
            "encoding": {"x": x, "y": y, "color": run_colour(data, legend=False),
                         "tooltip": [_RUN, {"field": "capacity", "title": "capacity tuples/s",
                                            "format": ",.1f"},
                                     {"field": "capacity_vs_key", "title": "vs KEY", "format": ".3f"},
                                     offered, {"field": "keeps_up", "title": "keeps up"}]}}  # fmt: skip
    ratios = {"mark": {"type": "text", "dy": -6, "baseline": "bottom"},
              "encoding": {"x": x, "y": y, "text": {"field": "vs_key"}}}  # fmt: skip
    rate = {"transform": [{"filter": "isValid(datum.offered_per_s)"}],
            "mark": {"type": "tick", "thickness": 3, "color": "#222"},
            "encoding": {"x": x, "y": {**y, "field": "offered_per_s"},
                         "tooltip": [_RUN, offered]}}  # fmt: skip
    # Without any known rate the ticks' layer is left out: an empty extent makes Vega warn.
    known = any(r["offered_per_s"] is not None for r in rows)
    return base(rows, run_ids, layer=[bars, ratios, *([rate] if known else [])])


def _utilisation(data: ReportData, run_ids: list[str]) -> dict[str, Any]:
    rows = [{"run_id": run["run_id"], "label": run["label"], "time": start, "window": utc(start),
             "worker": worker, "tuples": tuples, "utilisation": value}
            for run in data.utilisation
            for start, worker, tuples, value in zip(run["window_start_ms"], run["worker"],
                                                    run["tuples"], run["utilisation"], strict=True)
            if value is not None]  # fmt: skip
    lines = {"mark": {"type": "line", "point": {"size": 40, "filled": True}},
             "params": [zoom("zoom_utilisation", ["x", "y"])],
             "encoding": {"x": time_axis(),
                          "y": {"field": "utilisation", "type": "quantitative",
                                "title": "busiest worker's utilisation"},
                          "color": run_colour(data),
                          "tooltip": [_RUN, {"field": "window"}, {"field": "worker"},
                                      {"field": "tuples", "format": ","},
                                      {"field": "utilisation", "format": ".3f"}]}}  # fmt: skip
    # One rule, not one per row: the rows are folded into a single one first.
    saturated = {"transform": [{"aggregate": [{"op": "count", "as": "windows"}]}],
                 "mark": {"type": "rule", "color": "#d62728", "strokeDash": [4, 4]},
                 "encoding": {"y": {"datum": 1},
                              "tooltip": {"value": "utilisation 1: the worker saturates"}}}  # fmt: skip
    return base(rows, run_ids, layer=[lines, saturated])


def _busy_colour(data: ReportData) -> dict[str, Any]:
    """Run colours, with only the runs that measured busy time in the legend."""
    colour = run_colour(data)
    measured = {run["label"] for run in data.busy}
    pairs = [(label, c) for label, c in zip(colour["scale"]["domain"], colour["scale"]["range"],
                                            strict=True) if label in measured]  # fmt: skip
    return {**colour, "scale": {"domain": [p[0] for p in pairs], "range": [p[1] for p in pairs]}}


def _busy_workers(data: ReportData, run_ids: list[str]) -> dict[str, Any]:
    rows = [{"run_id": run["run_id"], "label": run["label"], "worker": w, "busy_s": busy,
             "tuples": tuples}
            for run in data.busy
            for w, (busy, tuples) in enumerate(zip(run["busy_s"], run["tuples"], strict=True))]  # fmt: skip
    return base(rows, run_ids, mark={"type": "bar"}, params=[zoom("zoom_busy", ["y"])],
                encoding={"x": {"field": "worker", "type": "ordinal", "axis": {"labelAngle": 0}},
                          "xOffset": {"field": "label"},
                          "y": {"field": "busy_s", "type": "quantitative", "title": "busy seconds"},
                          "color": _busy_colour(data),
                          "tooltip": [_RUN, {"field": "worker"},
                                      {"field": "busy_s", "title": "busy s", "format": ",.4~g"},
                                      {"field": "tuples", "format": ","}]})  # fmt: skip


def _busy_batches(data: ReportData, run_ids: list[str]) -> dict[str, Any]:
    rows = [{"run_id": run["run_id"], "label": run["label"], "batch_id": batch, "series": series,
             "seconds": value, "wall_s": wall}
            for run in data.busy
            for i, (batch, wall) in enumerate(zip(run["batch_id"], run["wall_s"], strict=True))
            for series, value in zip(_SERIES, (run["critical_s"][i], run["mean_s"][i]),
                                     strict=True)]  # fmt: skip
    # Batch ids are whole: a tick between two batches gets no label.
    batch = {"field": "batch_id", "type": "quantitative", "title": "micro-batch",
             "scale": {"nice": False, "padding": 12},
             "axis": {"tickMinStep": 1,
                      "labelExpr": "datum.value % 1 ? '' : format(datum.value, ',d')"}}  # fmt: skip
    return _dashed_lines(
        rows, run_ids, _busy_colour(data), ("series", _SERIES, "per batch"), "zoom_batches",
        x=batch, y={"field": "seconds", "type": "quantitative", "title": "busy seconds"},
        tooltip=[_RUN, {"field": "batch_id", "title": "batch"}, {"field": "series"},
                 {"field": "seconds", "format": ",.4~g"},
                 {"field": "wall_s", "title": "task wall s", "format": ",.4~g"}],
    )  # fmt: skip


def queue_charts(data: ReportData, run_ids: list[str]) -> dict[str, Any]:
    """The specs by chart name: ``latency`` and ``capacity`` always; ``utilisation`` when a run's
    speed and service time are known; ``busy_workers`` and ``busy_batches`` when a run has
    ``gold.worker_busy`` rows."""
    specs = {"latency": _latency(data, run_ids), "capacity": _capacity(data, run_ids)}
    if any(v is not None for run in data.utilisation for v in run["utilisation"]):
        specs["utilisation"] = _utilisation(data, run_ids)
    if data.busy:
        specs["busy_workers"] = _busy_workers(data, run_ids)
        specs["busy_batches"] = _busy_batches(data, run_ids)
    return specs
