"""Read the gold tables the report needs (through the table backend) and build the page."""

from __future__ import annotations

import logging
from collections.abc import Sequence

import pandas as pd

from core.tables.base import TableBackend
from core.warehouse import TableName, Warehouse, sql_name
from gold.report.data import ReportError, build_report_data
from gold.report.html import render_html
from gold.schemas import DISTRIBUTION_METRICS, HOT_KEYS, RUNS, WORKER_BUSY, WORKER_LOAD

__all__ = ["build_report", "read_gold"]

logger = logging.getLogger(__name__)

_REQUIRED = (DISTRIBUTION_METRICS, WORKER_LOAD)
_OPTIONAL = (RUNS, HOT_KEYS, WORKER_BUSY)


def read_gold(warehouse: Warehouse,
              backend: TableBackend) -> dict[TableName, pd.DataFrame | None]:  # fmt: skip
    """The report's gold tables as pandas frames, by table; optional ones missing are None.

    Raises:
        ReportError: The warehouse's gold metrics tables are missing.
    """
    frames: dict[TableName, pd.DataFrame | None] = {}
    for table in (*_REQUIRED, *_OPTIONAL):
        path = warehouse.table_uri(*table)
        if backend.version(path) is None:
            if table in _REQUIRED:
                raise ReportError(f"no gold tables in {warehouse.root} ({sql_name(table)} is "
                                  "missing; run `dkg run` first)")  # fmt: skip
            frames[table] = None
            continue
        frames[table] = backend.read(path).to_pandas()
        logger.debug("read %d rows of %s", len(frames[table]), sql_name(table))
    return frames


def build_report(warehouse: Warehouse, backend: TableBackend, run_ids: Sequence[str] = ()) -> str:
    """The HTML report of the chosen runs (default: every run with gold metrics)."""
    frames = read_gold(warehouse, backend)
    data = build_report_data(frames[DISTRIBUTION_METRICS], frames[WORKER_LOAD], frames[RUNS],
                             frames[HOT_KEYS], run_ids, worker_busy=frames[WORKER_BUSY])  # fmt: skip
    logger.info("writing the report of %d run(s)", len(data.summary))
    return render_html(data, warehouse.root)
