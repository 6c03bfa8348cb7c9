"""dist_cost against imbalance: one point per run, its name beside it, never over another name.

Runs often land on near-equal values (two balanced groupings, or one grouping
at two settings), and names drawn at their points then print over each other.
The names are placed here, before drawing: a name that would overlap one placed
higher up moves down a line, in data units (``label_y``) so that zooming keeps
it beside its point, and takes the run's colour so a moved name still shows
whose it is. The axes start at 0 at the lowest: neither quantity is negative.
"""

from __future__ import annotations

from typing import Any

from gold.report.data import ReportData
from gold.report.encodings import HEIGHT, base, run_colour, zoom

__all__ = ["dist_cost_chart"]

_PLOT_PX = HEIGHT - 50  # the plot's height inside the chart, less the x axis and its title
_LINE_PX = 14  # one line of 11 px names
_NEAR_X = 0.25  # names within this fraction of the x span may share pixels
_RIGHT_EDGE = 0.75  # past this fraction of the x span a name goes left of its point


def _domain(values: list[float]) -> list[float]:
    """Room around the points, never below 0 (no negative ticks)."""
    low, high = min(values), max(values)
    pad = max(0.15 * (high - low), 0.05 * abs(high), 0.01)
    return [max(0.0, low - pad), high + pad]


def _placed(rows: list[dict[str, Any]], xs: list[float], ys: list[float]) -> list[dict[str, Any]]:
    """Each row with its name's ``label_y`` and ``side`` (of the point: right or left)."""
    per_px = (ys[1] - ys[0]) / _PLOT_PX
    near = _NEAR_X * (xs[1] - xs[0])
    taken: list[tuple[float, float]] = []  # (imbalance, name's pixels from the top)
    label_y = {}
    # Top to bottom, so that a name only ever moves down, away from names placed already.
    for row in sorted(rows, key=lambda r: (-r["dist_cost"], r["imbalance"], r["run_id"])):
        px = (ys[1] - row["dist_cost"]) / per_px
        for x, other in sorted(taken, key=lambda t: t[1]):
            if abs(x - row["imbalance"]) < near and abs(px - other) < _LINE_PX:
                px = other + _LINE_PX
        taken.append((row["imbalance"], px))
        label_y[row["run_id"]] = ys[1] - px * per_px
    edge = xs[0] + _RIGHT_EDGE * (xs[1] - xs[0])
    return [{**row, "label_y": label_y[row["run_id"]],
             "side": "left" if row["imbalance"] > edge else "right"} for row in rows]  # fmt: skip


def _names(side: str, x: dict[str, Any], y: dict[str, Any], colour: dict[str, Any],
           tooltip: list[dict[str, Any]]) -> dict[str, Any]:  # fmt: skip
    return {"transform": [{"filter": f"datum.side === '{side}'"}],
            "mark": {"type": "text", "baseline": "middle", "fontWeight": "bold",
                     "align": "left" if side == "right" else "right",
                     "dx": 10 if side == "right" else -10},
            "encoding": {"x": x, "y": {**y, "field": "label_y"}, "text": {"field": "label"},
                         "color": colour, "tooltip": tooltip}}  # fmt: skip


def dist_cost_chart(data: ReportData, run_ids: list[str]) -> dict[str, Any]:
    """The scatter's spec: whole-run imbalance (x) against dist_cost (y), a named point per run."""
    rows = [r for r in data.dist_cost if r["imbalance"] is not None and r["dist_cost"] is not None]
    xs = _domain([r["imbalance"] for r in rows] or [0.0])
    ys = _domain([r["dist_cost"] for r in rows] or [1.0])
    rows = _placed(rows, xs, ys)
    lowest = min((r["label_y"] for r in rows), default=ys[0])
    ys[0] = max(0.0, min(ys[0], lowest - _LINE_PX * (ys[1] - ys[0]) / _PLOT_PX))
    # The domains are set, not niced: the names' places were worked out for these.
    x = {"field": "imbalance", "type": "quantitative", "title": "imbalance (lower: better balanced)",
         "scale": {"domain": xs, "nice": False}, "axis": {"tickCount": 10}}  # fmt: skip
    y = {"field": "dist_cost", "type": "quantitative", "title": "dist_cost (workers per key)",
         "scale": {"domain": ys, "nice": False}, "axis": {"tickCount": 8}}  # fmt: skip
    tooltip = [{"field": "label", "title": "run"}, {"field": "imbalance", "format": ".6~g"},
               {"field": "dist_cost", "format": ".6~g"}]  # fmt: skip
    colour = run_colour(data)
    points = {
        "mark": {"type": "point", "size": 160, "filled": True},
        "params": [zoom("zoom_cost", ["x", "y"])],
        "encoding": {"x": x, "y": y, "color": colour, "tooltip": tooltip},
    }
    names = [_names(side, x, y, colour, tooltip) for side in ("right", "left")]
    return base(rows, run_ids, layer=[points, *names])
