"""Read the gold tables the report needs (through the table backend) and build the page."""

from __future__ import annotations

import logging
from collections.abc import Sequence

import pandas as pd

from core.tables.base import TableBackend
from core.warehouse import Warehouse
from gold.report.data import ReportError, build_report_data
from gold.report.html import render_html

__all__ = ["build_report", "read_gold"]

logger = logging.getLogger(__name__)

_REQUIRED = ("distribution_metrics", "worker_load")
_OPTIONAL = ("runs", "hot_keys", "worker_busy")


def read_gold(warehouse: Warehouse, backend: TableBackend) -> dict[str, pd.DataFrame | None]:
    """The report's gold tables as pandas frames; optional ones missing are None.

    Raises:
        ReportError: The warehouse's gold metrics tables are missing.
    """
    frames: dict[str, pd.DataFrame | None] = {}
    for name in (*_REQUIRED, *_OPTIONAL):
        path = warehouse.table_uri("gold", name)
        if backend.version(path) is None:
            if name in _REQUIRED:
                raise ReportError(f"no gold tables in {warehouse.root} (gold.{name} is missing; "
                                  "run `dkg run` first)")  # fmt: skip
            frames[name] = None
            continue
        frames[name] = backend.read(path).to_pandas()
        logger.debug("read %d rows of gold.%s", len(frames[name]), name)
    return frames


def build_report(warehouse: Warehouse, backend: TableBackend, run_ids: Sequence[str] = ()) -> str:
    """The HTML report of the chosen runs (default: every run with gold metrics)."""
    frames = read_gold(warehouse, backend)
    data = build_report_data(frames["distribution_metrics"], frames["worker_load"],
                             frames["runs"], frames["hot_keys"], run_ids,
                             worker_busy=frames["worker_busy"])  # fmt: skip
    logger.info("writing the report of %d run(s)", len(data.summary))
    return render_html(data, warehouse.root)
