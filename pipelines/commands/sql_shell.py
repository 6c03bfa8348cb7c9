"""``dkg sql --shell``: statements read as they are typed, run on one Spark session.

A statement ends with ``;`` and may span lines. Each is checked before it goes
to Spark, which starts with the first statement that passes the check; a
mistake prints one line and the shell goes on. ``exit``, ``quit`` or end of
input (Ctrl-D) leave; Ctrl-C drops the statement being typed, or stops the
running one. On a terminal, lines can be edited and recalled (readline).
"""

from __future__ import annotations

import sys
from collections.abc import Callable

from pipelines.commands.common import UsageError
from pipelines.commands.sql_text import Statement, ends_statement, statements_of

__all__ = ["run_shell"]

_PROMPT, _MORE = "dkg-sql> ", "     ...> "
_LEAVE = {"exit", "quit", "\\q", "exit;", "quit;"}


def _read(prompt: str, interactive: bool) -> str | None:
    try:
        return input(prompt if interactive else "")
    except EOFError:
        return None


def _run(text: str, rows: Callable[[Statement], list[dict]], show: Callable[[list[dict]], None],
         syntax_check: bool) -> bool:  # fmt: skip
    """Run the statements of ``text``; whether all of them succeeded."""
    try:
        for statement in statements_of(text, syntax_check):
            show(rows(statement))
    except UsageError as exc:
        print(f"error: {exc}", file=sys.stderr, flush=True)
        return False
    except KeyboardInterrupt:
        print("stopped", file=sys.stderr, flush=True)
        return False
    return True


def run_shell(rows: Callable[[Statement], list[dict]], show: Callable[[list[dict]], None],
              syntax_check: bool = True) -> int:  # fmt: skip
    """Read statements until ``exit`` or end of input, running each as it ends.

    Args:
        rows: Runs one statement and returns its rows (raises ``UsageError``).
        show: Prints one statement's rows.
        syntax_check: Check each statement before Spark sees it.

    Returns:
        0, or 1 when input was not a terminal and a statement failed (as a script).
    """
    interactive = sys.stdin.isatty()
    if interactive:
        import readline  # noqa: F401 - input() then edits lines and keeps a history

        print("Spark SQL over the warehouse; end each statement with ';', leave with exit",
              file=sys.stderr)  # fmt: skip
    failed, lines = False, []
    while True:
        try:
            line = _read(_MORE if lines else _PROMPT, interactive)
        except KeyboardInterrupt:
            print(file=sys.stderr)
            lines = []
            continue
        if line is None or (not lines and line.strip().lower() in _LEAVE):
            break
        lines.append(line)
        text = "\n".join(lines)
        if ends_statement(text):
            failed = not _run(text, rows, show, syntax_check) or failed
            lines = []
    if lines and "\n".join(lines).strip():
        failed = not _run("\n".join(lines), rows, show, syntax_check) or failed
    return 1 if failed and not interactive else 0
