"""``dkg sql``: Spark SQL over the warehouse's tables by name (``gold.key_counts``, ...).

The gold views (``gold.run_comparison``, ...; see :mod:`gold.views`) are created
with the tables. A query, or a file (``--file``), may hold several statements
separated by ``;``: they run one after another in one Spark session, each
result printed in turn. ``--shell`` (the default when no query is given on a
terminal) reads statements as they are typed. Each statement's syntax is checked
before Spark starts, so a typo fails at once.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pipelines.commands.common import (
    UsageError,
    add_config_options,
    format_table,
    load_from_args,
    non_negative_int,
)
from pipelines.commands.sql_text import Statement, statements_of

__all__ = ["SQL_OPTIONS", "add_parser", "run"]

SQL_OPTIONS = {"warehouse": "warehouse.uri", "master": "spark.master"}
"""``dkg sql``'s options and the settings they set."""

Rows = list[dict[str, Any]]
Runner = Callable[[Statement], Rows]


def add_parser(subparsers: Any) -> None:
    """Register ``sql``."""
    parser = subparsers.add_parser(
        "sql", help="run Spark SQL over the lakehouse tables",
        description="Run Spark SQL over every table of the warehouse, named <layer>.<table> "
        "(bronze.raw_events, silver.routed, gold.distribution_metrics, ...). Several statements "
        "separated by ';' run in one Spark session, each result printed in turn.",
    )  # fmt: skip
    parser.add_argument("query", nargs="?", help='e.g. "SELECT * FROM gold.distribution_metrics"; '
                        "several statements separated by ';'")  # fmt: skip
    parser.add_argument("--file", help="read the statements from this file: a path, or a name of "
                        "the project's (compare_groupings, conf/sql/compare_groupings.sql)")  # fmt: skip
    parser.add_argument("--shell", action="store_true",
                        help="read statements as they are typed, each ending with ';' "
                        "(default when no query is given on a terminal)")  # fmt: skip
    parser.add_argument("--no-syntax-check", dest="syntax_check", action="store_false",
                        help="send statements to Spark unchecked (for Spark SQL the check "
                        "before Spark starts does not know)")  # fmt: skip
    parser.add_argument("--warehouse", help="warehouse root: a path or s3://bucket/prefix "
                        "(warehouse.uri)")  # fmt: skip
    parser.add_argument("--limit", type=non_negative_int, default=100,
                        help="rows to print at most")  # fmt: skip
    parser.add_argument("--json", action="store_true", help="print rows as JSON")
    parser.add_argument("--master", help="Spark master URL (spark.master)")
    add_config_options(parser)
    parser.set_defaults(handler=run)


def _sql_file(given: str) -> Path:
    from pipelines.job_specs.bundled import SQL_SUFFIXES, require_conf_file

    return require_conf_file(given, "sql", SQL_SUFFIXES, "", "SQL files", UsageError)


def _text(args: argparse.Namespace) -> str:
    if args.query is not None and args.file is not None:
        raise UsageError("give a query or --file FILE (one of them)")
    if args.file is None:
        return str(args.query)
    path = _sql_file(args.file)
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(
            f"cannot read {args.file}: {getattr(exc, 'strerror', None) or exc}"
        ) from None


def _wants_shell(args: argparse.Namespace) -> bool:
    if args.shell:
        if args.query is not None or args.file is not None:
            raise UsageError(
                "--shell reads the statements as they are typed: give no query or --file"
            )
        return True
    if args.query is None and args.file is None:
        if sys.stdin.isatty():
            return True
        raise UsageError("give a query or --file FILE (one of them), or --shell")
    return False


def _first_line(message: str) -> str:
    # Spark's message starts with a blank line and ends with the query and a
    # caret; its first non-blank line names the problem.
    return next((line.strip() for line in message.splitlines() if line.strip()), "")


@contextmanager
def _session(args: argparse.Namespace, announce: bool = False) -> Iterator[Runner]:
    """A function running one statement on one Spark session, started on first use.

    With ``announce``, say so on stderr when Spark starts (a shell's user waits).
    """
    from pipelines.pipeline_runtime import open_runtime

    loaded = load_from_args(args, SQL_OPTIONS)
    with open_runtime(loaded, app_name="dkg-sql") as runtime:
        warehouse = runtime.existing_warehouse()  # a missing warehouse fails before Spark starts
        started: list[Any] = []

        def rows(statement: Statement) -> Rows:
            from pyspark.errors import PySparkException

            if not started:
                if announce:
                    print("starting Spark ...", file=sys.stderr, flush=True)
                started.append(_start(runtime, warehouse))
            try:
                frame = started[0].sql(statement.text).limit(args.limit)
                return [row.asDict(recursive=True) for row in frame.collect()]
            except PySparkException as exc:
                message = _first_line(str(exc)) or type(exc).__name__
                raise UsageError(f"query failed{_where(statement)}: {message}") from None

        yield rows


def _where(statement: Statement) -> str:
    """Where a statement starts, when it is not the whole text: `` at line 3``."""
    if (statement.line, statement.column) == (1, 1):
        return ""
    column = f", column {statement.column}" if statement.column > 1 else ""
    return f" at line {statement.line}{column}"


def _start(runtime: Any, warehouse: Any) -> Any:
    from core.tables import register_tables
    from gold.views import register_views

    spark = runtime.spark
    spark.sparkContext.setLogLevel("ERROR")
    register_tables(spark, warehouse)
    register_views(spark)
    return spark


def _print_rows(rows: Rows, as_json: bool) -> None:
    if as_json:
        print(json.dumps(rows, indent=2, default=str))
    elif rows:
        print(format_table(rows, list(rows[0])))
    else:
        print("(no rows)")


def _headline(statement: Statement) -> str:
    first = " ".join(statement.text.split())
    return first if len(first) <= 100 else f"{first[:97]}..."


def _run_all(statements: Sequence[Statement], rows: Runner, as_json: bool) -> None:
    if len(statements) == 1:
        _print_rows(rows(statements[0]), as_json)
        return
    for n, statement in enumerate(statements):
        result = rows(statement)
        if as_json:  # one JSON document per line and statement
            print(json.dumps({"line": statement.line, "statement": statement.text,
                              "rows": result}, default=str), flush=True)  # fmt: skip
            continue
        if n:
            print()
        print(f"-- statement {n + 1} (line {statement.line}): {_headline(statement)}")
        _print_rows(result, as_json=False)
        sys.stdout.flush()


def run(args: argparse.Namespace) -> int:
    """Check the statements, then run them on one session and print each result."""
    if _wants_shell(args):
        from pipelines.commands.sql_shell import run_shell

        with _session(args, announce=sys.stdin.isatty()) as rows:
            return run_shell(rows, lambda result: _print_rows(result, args.json),
                             args.syntax_check)  # fmt: skip
    statements = statements_of(_text(args), args.syntax_check)
    with _session(args) as rows:
        _run_all(statements, rows, args.json)
    return 0
