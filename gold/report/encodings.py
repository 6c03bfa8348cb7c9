"""The pieces every chart spec shares: the run picker's filter, run colours, zoom and time axes.

Every chart filters its rows by the page's run picker through one Vega
parameter, ``picked`` (the run ids shown), which the page sets on each view;
a run keeps one colour in every chart, whichever runs are picked.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from gold.report.data import ReportData

__all__ = ["HEIGHT", "PICKED", "base", "run_colour", "run_colours", "time_axis", "utc", "zoom"]

PICKED = "picked"
"""The Vega parameter holding the ids of the runs the picker shows."""

HEIGHT = 300
"""Every chart's plot height in pixels (the width follows the page)."""

_PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
            "#7f7f7f", "#bcbd22", "#17becf")  # fmt: skip


# The first tick and each midnight carry the date, the others the time of day. Vega's
# default labels use a 12-hour clock ("12:01" for 00:01), which misleads here.
_TIME_LABEL = ("utcFormat(datum.value, datum.index === 0 || datum.value % 86400000 === 0"
               " ? '%Y-%m-%d %H:%M' : datum.value % 60000 ? '%H:%M:%S' : '%H:%M')")  # fmt: skip


def run_colours(data: ReportData) -> dict[str, str]:
    """One colour per run id, in report order (the palette repeats past ten runs)."""
    return {row["run_id"]: _PALETTE[i % len(_PALETTE)] for i, row in enumerate(data.summary)}


def base(rows: list[dict[str, Any]], run_ids: list[str], params: Sequence[dict[str, Any]] = (),
         transform: Sequence[dict[str, Any]] = (), **spec: Any) -> dict[str, Any]:  # fmt: skip
    """A chart as wide as its box, its rows filtered by the picker (``picked``)."""
    return {"width": "container", "height": HEIGHT,
            "autosize": {"type": "fit", "contains": "padding"},
            "params": [{"name": PICKED, "value": run_ids}, *params],
            "data": {"values": rows},
            "transform": [{"filter": f"indexof({PICKED}, datum.run_id) >= 0"}, *transform],
            **spec}  # fmt: skip


def run_colour(data: ReportData, legend: bool = True) -> dict[str, Any]:
    """The colour channel by run label, with the run's fixed colour."""
    colours = run_colours(data)
    return {"field": "label", "type": "nominal", "title": "run",
            "scale": {"domain": [r["label"] for r in data.summary],
                      "range": [colours[r["run_id"]] for r in data.summary]},
            "legend": {"labelLimit": 360} if legend else None}  # fmt: skip


def zoom(name: str, encodings: list[str]) -> dict[str, Any]:
    """Wheel zooms and drag pans the given axes; a double click resets them."""
    return {"name": name, "select": {"type": "interval", "encodings": encodings},
            "bind": "scales"}  # fmt: skip


def time_axis(title: str = "window start (UTC)") -> dict[str, Any]:
    """An x channel of epoch milliseconds (field ``time``) drawn as UTC dates and times.

    Event times are UTC; a local-time axis would shift them by the reader's time zone.
    """
    # A little room at both ends, so the first and last points are not cut by the axes.
    return {"field": "time", "type": "temporal", "title": title,
            "scale": {"type": "utc", "nice": False, "padding": 12},
            "axis": {"labelExpr": _TIME_LABEL, "labelOverlap": True, "labelSeparation": 8}}  # fmt: skip


def utc(ms: int) -> str:
    """An epoch-millisecond time as a readable UTC timestamp (tooltips and tables)."""
    return pd.Timestamp(ms, unit="ms", tz="UTC").strftime("%Y-%m-%d %H:%M:%S UTC")
