"""``dkg sql``: Spark SQL over the warehouse's tables by name (``gold.key_counts``, ...).

The gold views (``gold.run_comparison``, ...; see :mod:`gold.views`) are created
with the tables, and a query may come from a file (``--file conf/sql/x.sql``).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from pipelines.commands.common import (
    UsageError,
    add_config_options,
    format_table,
    load_from_args,
    non_negative_int,
)

__all__ = ["add_parser", "run"]


def add_parser(subparsers: Any) -> None:
    """Register ``sql``."""
    parser = subparsers.add_parser(
        "sql", help="run a Spark SQL query over the lakehouse tables",
        description="Run Spark SQL over every table of the warehouse, named <layer>.<table> "
        "(bronze.raw_events, silver.routed, gold.distribution_metrics, ...).",
    )  # fmt: skip
    parser.add_argument("query", nargs="?", help='e.g. "SELECT * FROM gold.distribution_metrics"')
    parser.add_argument(
        "--file", type=Path, help="read the query from this file (e.g. conf/sql/*.sql)"
    )
    parser.add_argument("--warehouse", help="warehouse root: a path or s3://bucket/prefix "
                        "(warehouse.uri)")  # fmt: skip
    parser.add_argument("--limit", type=non_negative_int, default=100, help="rows to print at most")
    parser.add_argument("--json", action="store_true", help="print rows as JSON")
    parser.add_argument("--master", help="Spark master URL (spark.master)")
    add_config_options(parser)
    parser.set_defaults(handler=run)


def _query(args: argparse.Namespace) -> str:
    if (args.query is None) == (args.file is None):
        raise UsageError("give a query or --file FILE (one of them)")
    if args.file is None:
        return str(args.query)
    try:
        text = args.file.read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot read {args.file}: {exc.strerror or exc}") from None
    # One statement per file; a trailing ';' is how SQL files usually end.
    return text.strip().rstrip(";")


def run(args: argparse.Namespace) -> int:
    """Register the tables and views, run the query, print the rows."""
    from pyspark.errors import PySparkException

    from core.runtime import Runtime
    from core.tables import register_tables
    from gold.views import register_views

    query = _query(args)
    loaded = load_from_args(args, {"warehouse": "warehouse.uri", "master": "spark.master"})
    with Runtime(loaded, app_name="dkg-sql") as runtime:
        warehouse = runtime.existing_warehouse()
        spark = runtime.spark
        spark.sparkContext.setLogLevel("ERROR")
        register_tables(spark, warehouse)
        register_views(spark)
        try:
            rows = [row.asDict(recursive=True)
                    for row in spark.sql(query).limit(args.limit).collect()]  # fmt: skip
        except PySparkException as exc:
            # Spark's message starts with a blank line and ends with the query and a
            # caret; its first non-blank line names the problem.
            first = next((line.strip() for line in str(exc).splitlines() if line.strip()), "")
            raise UsageError(f"query failed: {first or type(exc).__name__}") from None
    if args.json:
        print(json.dumps(rows, indent=2, default=str))
    elif rows:
        print(format_table(rows, list(rows[0])))
    else:
        print("(no rows)")
    return 0
