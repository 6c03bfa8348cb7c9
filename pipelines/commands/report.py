"""``dkg report``: an offline, interactive HTML report comparing the groupings of runs."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path
from typing import Any

from pipelines.commands.common import UsageError, add_config_options, load_from_args

__all__ = ["add_parser", "run"]

logger = logging.getLogger(__name__)


def add_parser(subparsers: Any) -> None:
    """Register ``report``."""
    parser = subparsers.add_parser(
        "report", help="write a self-contained HTML report comparing runs",
        description="Read the gold tables (no Spark) and write one self-contained HTML file that "
        "opens offline: a paragraph of what balance bought, interactive charts of latency "
        "(p50, p99) over event time, capacity against the offered rate, the busiest worker's "
        "utilisation, busy time per worker (physical mode), load per worker, metrics per "
        "window, dist_cost against imbalance and hot keys' pool sizes, a summary table of "
        "each run's cumulative metrics, and a picker of the runs to show.",
    )  # fmt: skip
    parser.add_argument("--warehouse", help="warehouse root: a path or s3://bucket/prefix "
                        "(warehouse.uri)")  # fmt: skip
    add_config_options(parser)
    parser.add_argument("--run-id", action="append", default=[], dest="run_ids", metavar="RUN",
                        help="a run to include (repeatable); default: every run in "
                        "gold.runs")  # fmt: skip
    parser.add_argument("--output", type=Path, default=Path("report.html"),
                        help="HTML file to write")  # fmt: skip
    parser.set_defaults(handler=run)


def _write(path: Path, html: str) -> None:
    try:
        path.write_text(html, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write the report to {path}: {exc.strerror or exc}") from None


def run(args: argparse.Namespace) -> int:
    """Build the report and write it; prints where it went."""
    from gold.report import ReportError, build_report
    from pipelines.pipeline_runtime import open_runtime

    # Fail before reading and drawing anything.
    if not args.output.parent.is_dir():
        raise UsageError(
            f"cannot write the report to {args.output}: no folder {args.output.parent}"
        )
    if args.output.is_dir():
        raise UsageError(f"cannot write the report to {args.output}: it is a folder")
    with open_runtime(load_from_args(args, {"warehouse": "warehouse.uri"}), "dkg-report") as runtime:
        try:
            html = build_report(runtime.existing_warehouse(), runtime.backend, args.run_ids)
        except ReportError as exc:
            raise UsageError(str(exc)) from None
    _write(args.output, html)
    print(f"report written to {args.output} ({len(html) / 1024:,.0f} KiB)")
    return 0
