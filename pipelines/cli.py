"""The ``dkg`` command line."""

from __future__ import annotations

import argparse
import logging
import re
import sys
import textwrap
from collections.abc import Sequence
from importlib import metadata
from typing import Any, NoReturn

from core.errors import USER_ERRORS, DkgError, describe
from core.logs import configure_logging
from core.spark.task_errors import hide_reported_failures, task_failure

__all__ = ["CommandLineError", "Parser", "build_parser", "main"]

logger = logging.getLogger(__name__)


class CommandLineError(DkgError):
    """The command line itself is wrong (unknown option, bad value, missing argument)."""

    def __init__(self, prog: str, message: str) -> None:
        """Keep the (sub)command's name and argparse's message apart."""
        super().__init__(message)
        self.prog = prog


# Inline markup of a docstring: ``dkg run``, :func:`~pipelines.medallion.run_finite`, `x`.
_RST_INLINE = re.compile(r"(?::[a-z]+:)?`+~?([^`]+?)`+")


def _plain_text(text: str) -> str:
    """A docstring as terminal text: inline reStructuredText markup dropped, ``::`` as ``:``."""
    return _RST_INLINE.sub(r"\1", text).replace("::", ":")


_WHOLE_WORDS = {"break_on_hyphens": False, "break_long_words": False}


class _HelpFormatter(argparse.HelpFormatter):
    """Descriptions in plain text, paragraph by paragraph; a default shown only when there is one.

    An option shows ``(default: X)`` when X is a real value and its help does not
    already say what the default is. Options left unset (None) fall back to the
    configuration, which ``dkg config show`` prints with each value's origin.
    """

    # Lines break between words only: never inside an option (--bootstrap-servers)
    # or a grouping list.
    def _fill_text(self, text: str, width: int, indent: str) -> str:
        paragraphs = re.split(r"\n\s*\n", textwrap.dedent(_plain_text(text)).strip())
        return "\n\n".join(
            textwrap.fill(" ".join(p.split()), width, initial_indent=indent,
                          subsequent_indent=indent, **_WHOLE_WORDS)
            for p in paragraphs
        )  # fmt: skip

    def _split_lines(self, text: str, width: int) -> list[str]:
        return textwrap.wrap(" ".join(text.split()), width, **_WHOLE_WORDS)

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        default = action.default
        unset = default is None or default is False or default == [] or default == argparse.SUPPRESS
        if unset or "default" in text:
            return text
        shown = f"{default:,}" if type(default) is int else "%(default)s"
        return f"{text} (default: {shown})"


class Parser(argparse.ArgumentParser):
    """argparse, but a mistake raises instead of printing usage and exiting.

    ``main`` then prints one line naming the problem (exit code 2) and tests can
    call ``main`` without catching ``SystemExit``. Subparsers share the class,
    and with it the help formatter.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        """An ``argparse.ArgumentParser`` that formats its help with ``_HelpFormatter``."""
        kwargs.setdefault("formatter_class", _HelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        raise CommandLineError(self.prog, message)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand."""
    from pipelines.commands import (
        advise,
        bench,
        check,
        config,
        job,
        join,
        kafka,
        produce,
        report,
        run,
        simulate,
        sql,
    )

    parser = Parser(
        prog="dkg",
        description="Skew-aware stream groupings (Dynamic Key Grouping and friends).",
    )
    parser.add_argument("--version", action="version",
                        version=f"dkg {metadata.version('dkg-lakehouse')}")  # fmt: skip
    parser.add_argument("-v", "--verbose", action="count", default=0,
                        help="the log shows results, warnings and errors by default; -v: "
                        "every step's lines too; -vv: debug logging, Spark's too")  # fmt: skip
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    run.add_parser(subparsers)
    simulate.add_parser(subparsers)
    advise.add_parser(subparsers)
    produce.add_parser(subparsers)
    kafka.add_parser(subparsers)
    bench.add_parser(subparsers)
    sql.add_parser(subparsers)
    report.add_parser(subparsers)
    check.add_parser(subparsers)
    job.add_parser(subparsers)
    join.add_parser(subparsers)
    config.add_parser(subparsers)
    return parser


# Characters str.splitlines() breaks at; a name from a user's file may hold any of them.
_LINE_BREAKS = {ord(c): repr(c)[1:-1] for c in "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"}


def _one_line(message: str) -> str:
    """``message`` with its line breaks escaped (``\\n``), so an error stays on one line."""
    return message.translate(_LINE_BREAKS)


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``dkg``; returns the process exit code."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except CommandLineError as exc:
        print(f"{exc.prog}: error: {_one_line(str(exc))} (see {exc.prog} --help)", file=sys.stderr)
        return 2
    configure_logging(logging.DEBUG if args.verbose > 1 else logging.INFO,
                      details=args.verbose > 0)  # fmt: skip
    hide_reported_failures()  # a failed query is reported once, below
    try:
        return int(args.handler(args))
    except USER_ERRORS as exc:
        if args.verbose:
            logger.exception("failed")
        print(f"dkg {args.command}: error: {_one_line(describe(exc))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"dkg {args.command}: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:
        # A user error raised where Spark ran the project's code arrives wrapped in
        # Spark's report (plan, JVM and Python traces): one line of it, the rest at DEBUG.
        failure = task_failure(exc)
        if failure is None:
            raise
        logger.debug("Spark's report of the failure", exc_info=exc)
        print(f"dkg {args.command}: error: {_one_line(describe(failure))}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
