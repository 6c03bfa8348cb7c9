"""The report page: a Jinja2 template filled with the figure data, the chart specs and Vega.

The page is self-contained: styles, script and the Vega libraries inline, and
each chart's spec and numbers in ``<script type="application/json">`` blocks
(``data-<chart>`` for the figure data, ``spec-<chart>`` for the Vega-Lite spec;
Jinja2's ``tojson`` escapes ``<``, ``>`` and ``&``, so the JSON cannot close the
script element).
"""

from __future__ import annotations

import math
from dataclasses import asdict
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape

from gold.report.charts import render_charts
from gold.report.data import SUMMARY_COLUMNS, WINDOW_METRICS, ReportData
from gold.report.encodings import PICKED, run_colours, utc
from gold.report.story import write_story
from gold.report.vega import vega_javascript

__all__ = ["render_html"]

_TEMPLATES = Path(__file__).parent / "templates"


def _display(value: Any) -> str:
    """A readable cell: integers with separators, floats to 4 significant digits (whole from 1,000).

    The exact value is in the cell's ``data-value``; short cells keep the summary
    table on a laptop's screen.
    """
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "n/a"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if value != 0 and (abs(value) < 1e-3 or abs(value) >= 1e6):
            return f"{value:.3e}"
        return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.4g}"
    return str(value)


def _breakable(name: str) -> str:
    """A column name that may wrap after its underscores (a zero-width space after each)."""
    return name.replace("_", "_\u200b")


def _exact(value: Any) -> str:
    """The full-precision value for a ``data-value`` attribute (``repr`` round-trips floats)."""
    return "" if value is None else repr(value)


def _environment() -> Environment:
    env = Environment(loader=FileSystemLoader(_TEMPLATES), autoescape=select_autoescape(["j2"]),
                      undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True)  # fmt: skip
    env.filters["display"] = _display
    env.filters["exact"] = _exact
    env.filters["breakable"] = _breakable
    return env


def render_html(data: ReportData, warehouse: str, title: str = "DKG groupings report") -> str:
    """The whole page as a string.

    Args:
        data: The figure data (also embedded as JSON).
        warehouse: Shown in the header, so a saved report says where it came from.
        title: Page title.
    """
    template = _environment().get_template("report.html.j2")
    return template.render(title=title, warehouse=warehouse, data=data, columns=SUMMARY_COLUMNS,
                           window_metrics=WINDOW_METRICS, blocks=asdict(data),
                           story=write_story(data), utc=utc,
                           specs=render_charts(data), colours=run_colours(data), picked=PICKED,
                           vega=vega_javascript())  # fmt: skip
