"""The one place that sets up logging handlers (only the CLI calls it).

By default the console shows only what a user acts on: the lines logged with
``extra=RESULT`` (what was produced, each stage's one result line, the
data-quality verdict) as bare messages, and every warning and error. ``dkg -v``
adds the project's other INFO lines (each step's start and end, brokers, topics,
batches) as ``LEVEL name: message``; ``dkg -vv`` shows everything at DEBUG,
including third-party libraries and the Spark JVM's own log (see :func:`verbose`,
read by ``build_spark``). Lines are written above any progress bar on stderr,
never into it.
"""

from __future__ import annotations

import logging
import math
import sys
from collections.abc import Mapping
from typing import Any

from tqdm import tqdm

__all__ = ["RESULT", "THIRD_PARTY_LOGGERS", "configure_logging", "figure", "figures", "verbose"]

RESULT: Mapping[str, Any] = {"result": True}
"""``logger.info(..., extra=RESULT)``: a line shown without ``-v``; keep them few."""

_DETAILED = "%(levelname)s %(name)s: %(message)s"

THIRD_PARTY_LOGGERS = {"py4j": logging.WARNING, "numba": logging.WARNING,
                       "urllib3": logging.WARNING, "great_expectations": logging.WARNING,
                       "asyncio": logging.WARNING,
                       "filelock": logging.WARNING, "fsspec": logging.WARNING}  # fmt: skip
# py4j logs every JVM call at DEBUG and numba every compilation step: useless even
# when debugging this project, so they stay at WARNING in verbose mode too.
_ALWAYS_QUIET = ("py4j", "numba")

# pyspark logs every SQL error it converts, as JSON at ERROR, to its own handler,
# before the caller can even catch it (`dkg sql` turns it into one line).
_PYSPARK_ERROR_LOGGERS = ("SQLQueryContextLogger", "DataFrameQueryContextLogger")

_state = {"verbose": False}


class _CurrentStderr(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes to whatever ``sys.stderr`` is at the time of each record.

    A handler that kept the stream it was built with would write into a closed
    capture buffer once a test's output capture ends (``logging.lastResort``
    resolves ``sys.stderr`` late for the same reason).
    """

    def __init__(self) -> None:
        super().__init__(sys.stderr)

    @property  # type: ignore[override]
    def stream(self) -> Any:
        return sys.stderr

    @stream.setter
    def stream(self, value: Any) -> None:
        pass

    def emit(self, record: logging.LogRecord) -> None:
        # A line written into a live bar would be torn by the bar's next redraw.
        with tqdm.external_write_mode(file=sys.stderr):
            super().emit(record)


def _shown(record: logging.LogRecord) -> bool:
    """Without ``-v``: result lines, warnings and errors."""
    return record.levelno >= logging.WARNING or bool(getattr(record, "result", False))


class _ResultFormatter(logging.Formatter):
    """A result line as its bare message; a warning or an error with its level and logger."""

    def __init__(self) -> None:
        super().__init__(_DETAILED)

    def format(self, record: logging.LogRecord) -> str:
        if record.levelno < logging.WARNING:
            return record.getMessage()
        return super().format(record)


def verbose() -> bool:
    """Whether the CLI asked for everything (``--verbose``)."""
    return _state["verbose"]


def configure_logging(level: int = logging.INFO, details: bool = True) -> None:
    """Log to stderr.

    Args:
        level: the project's level; ``DEBUG`` (``-vv``) also lets third-party
            libraries and the Spark JVM log everything.
        details: every line at ``level`` or above, as ``LEVEL name: message``
            (``-v``); False (the CLI's default): only result lines
            (``extra=RESULT``), warnings and errors.
    """
    handler = _CurrentStderr()
    if not details:
        handler.addFilter(_shown)
        handler.setFormatter(_ResultFormatter())
    logging.basicConfig(level=level, format=_DETAILED, force=True, handlers=[handler])
    _state["verbose"] = level <= logging.DEBUG
    for name, quiet_level in THIRD_PARTY_LOGGERS.items():
        quiet = name in _ALWAYS_QUIET or not _state["verbose"]
        logging.getLogger(name).setLevel(quiet_level if quiet else logging.NOTSET)
    for name in _PYSPARK_ERROR_LOGGERS:
        _quiet_pyspark_errors(name, not _state["verbose"])


def _quiet_pyspark_errors(name: str, quiet: bool) -> None:
    if quiet:
        # Never enabled, so pyspark's extra keyword arguments are never formatted.
        logging.getLogger(name).setLevel(logging.CRITICAL + 1)
        return
    existing = logging.Logger.manager.loggerDict.get(name)
    if type(existing) is logging.Logger:
        # A plain logger made above would not accept pyspark's keyword arguments:
        # drop it so pyspark builds its own (a PySparkLogger) on first use.
        del logging.Logger.manager.loggerDict[name]


def figure(value: float, decimals: int | None = None) -> str:
    """A number as a person reads it: ``12,345``, ``0.898``, ``1,115``.

    Args:
        value: the number (anything else is shown as ``str`` shows it).
        decimals: digits after the point for a float; default: three significant
            digits below 100, none from 100 on.
    """
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    if isinstance(value, int):
        return f"{value:,}"
    if decimals is not None:
        return f"{value:,.{decimals}f}"
    if not math.isfinite(value) or abs(value) < 100:
        return f"{value:.3g}"
    return f"{value:,.0f}"


def figures(values: Mapping[str, float], unit: str = "", decimals: int | None = None) -> str:
    """Named numbers on one line: ``bronze 12.6 s, silver 18.6 s`` (``unit="s", decimals=1``)."""
    suffix = f" {unit}" if unit else ""
    return ", ".join(f"{name} {figure(value, decimals)}{suffix}" for name, value in values.items())
