"""``dkg report``: an offline, self-contained HTML comparison of runs from the gold tables.

- :mod:`.data`: gold frames -> plain figure data (pure pandas); the queue model's
  figures (capacity, utilisation, busy time) in :mod:`.queue_figures`.
- :mod:`.story`: figure data -> the paragraph on top of the page (what balance buys).
- :mod:`.charts`: figure data -> Vega-Lite specs (plain dicts), with :mod:`.queue_charts`,
  :mod:`.scatter` and the shared :mod:`.encodings`.
- :mod:`.vega`: the Vega libraries' JavaScript, bundled offline (vl-convert).
- :mod:`.html`: figure data + specs + Vega -> one interactive HTML page (Jinja2).
- :mod:`.load`: reads the gold tables with delta-rs and ties the three together.
"""

from __future__ import annotations

from gold.report.data import ReportData, ReportError, build_report_data
from gold.report.load import build_report

__all__ = ["ReportData", "ReportError", "build_report", "build_report_data"]
