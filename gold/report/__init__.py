"""``dkg report``: an offline, self-contained HTML comparison of runs from the gold tables.

- :mod:`.data`: gold frames -> plain figure data (pure pandas).
- :mod:`.charts`: figure data -> Vega-Lite specs (plain dicts).
- :mod:`.vega`: the Vega libraries' JavaScript, bundled offline (vl-convert).
- :mod:`.html`: figure data + specs + Vega -> one interactive HTML page (Jinja2).
- :mod:`.load`: reads the gold tables with delta-rs and ties the three together.
"""

from __future__ import annotations

from gold.report.data import ReportData, ReportError, build_report_data
from gold.report.load import build_report

__all__ = ["ReportData", "ReportError", "build_report", "build_report_data"]
