"""SQL text without Spark: split into statements, and a syntax check before Spark starts.

Spark's own parser lives in the JVM, which takes 10 s or more to start; sqlglot
parses Spark SQL in pure Python in milliseconds, so a mistyped keyword or an
unclosed parenthesis fails at once. sqlglot knows less than Spark: a statement
it cannot parse as a query but recognizes (``SHOW TABLES``, ``EXPLAIN ...``) goes
to Spark as it is, and one it refuses although Spark accepts it can be sent with
``--no-syntax-check``. Statements are split at the ``;`` tokens, so a ``;`` in a
string or comment does not split, and each is sent to Spark as it was written.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Any

from pipelines.commands.common import UsageError

__all__ = ["Statement", "check_syntax", "ends_statement", "split_statements", "statements_of"]

_DIALECT = "spark"
# sqlglot warns when it falls back to passing a statement through ("contains
# unsupported syntax"); that is the intended outcome here, not news for the user.
_SQLGLOT_LOGGER = "sqlglot"
_TOKENIZING = re.compile(r"Error tokenizing '(.*)'", re.S)
_GENERIC = ("Invalid expression", "Required keyword")


@dataclass(frozen=True)
class Statement:
    """One statement of a SQL text: its text and where it starts (1-based line, column)."""

    text: str
    line: int = 1
    column: int = 1


def _tokens(text: str) -> list[Any]:
    import sqlglot

    return list(sqlglot.tokenize(text, read=_DIALECT))


def _unreadable(exc: Exception) -> UsageError:
    match = _TOKENIZING.search(str(exc))
    near = f" near {' '.join(match.group(1).split())!r}" if match else ""
    return UsageError(f"syntax error{near}: an unclosed quote or comment?")


def split_statements(text: str) -> list[Statement]:
    """The statements of ``text``, separated by ``;`` (empty ones dropped).

    Raises:
        UsageError: ``text`` holds no statement, or cannot be read (an unclosed
            quote or comment).
    """
    from sqlglot.errors import TokenError

    try:
        tokens = _tokens(text)
    except TokenError as exc:
        raise _unreadable(exc) from None
    statements, current = [], []
    for token in [*tokens, None]:
        if token is not None and token.token_type.name != "SEMICOLON":
            current.append(token)
            continue
        if current:
            first, last = current[0], current[-1]
            start_column = first.col - len(first.text) + 1
            statements.append(Statement(text[first.start : last.end + 1], first.line, start_column))
        current = []
    if not statements:
        raise UsageError("no SQL statement to run")
    return statements


def ends_statement(text: str) -> bool:
    """Whether ``text`` ends with a ``;`` that closes a statement (a shell's input is complete)."""
    from sqlglot.errors import TokenError

    try:
        tokens = _tokens(text)
    except TokenError:
        return False  # an open quote or comment: more lines to come
    return bool(tokens) and tokens[-1].token_type.name == "SEMICOLON"


def _where(statement: Statement, error: dict[str, Any]) -> tuple[int, int]:
    line, end = int(error.get("line") or 1), int(error.get("col") or 1)
    column = max(1, end - len(error.get("highlight") or "") + 1)
    if line == 1:
        column += statement.column - 1
    return statement.line + line - 1, column


def _reason(description: str) -> str:
    if description.startswith(_GENERIC) or "<" in description:
        return ""
    return f": {description[:1].lower()}{description[1:]}"


def check_syntax(statement: Statement) -> None:
    """Refuse ``statement`` if sqlglot's Spark dialect cannot parse it.

    Raises:
        UsageError: ``syntax error at or near 'FORM' (line 1, column 10)``.
    """
    import sqlglot
    from sqlglot.errors import ParseError, TokenError

    logging.getLogger(_SQLGLOT_LOGGER).setLevel(logging.ERROR)
    try:
        sqlglot.parse_one(statement.text, read=_DIALECT)
    except TokenError as exc:
        raise _unreadable(exc) from None
    except ParseError as exc:
        error = exc.errors[0] if exc.errors else {}
        line, column = _where(statement, error)
        near = error.get("highlight") or ""
        at = f"at or near {near!r}" if near else "at the end"
        reason = _reason(str(error.get("description", "")))
        raise UsageError(f"syntax error {at} (line {line}, column {column}){reason} "
                         "(if Spark accepts it, add --no-syntax-check)") from None  # fmt: skip


def statements_of(text: str, syntax_check: bool = True) -> list[Statement]:
    """The statements of ``text``, each checked unless ``syntax_check`` is False.

    Unchecked, a text that cannot be split (an open quote, say) goes to Spark whole.

    Raises:
        UsageError: No statement, or one that fails the check.
    """
    try:
        statements = split_statements(text)
    except UsageError:
        if syntax_check or not text.strip():
            raise
        return [Statement(text.strip())]
    if syntax_check:
        for statement in statements:
            check_syntax(statement)
    return statements
