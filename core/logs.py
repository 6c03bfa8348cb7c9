"""The one place that sets up logging handlers (only the CLI calls it).

By default the console shows the project's own INFO lines (progress, milestones)
and only warnings from third-party libraries. ``dkg --verbose`` shows everything at DEBUG, including the
Spark JVM's own log (see :func:`verbose`, read by ``build_spark``).
"""

from __future__ import annotations

import logging
import math
import sys
from collections.abc import Mapping
from typing import Any

__all__ = ["THIRD_PARTY_LOGGERS", "configure_logging", "figure", "figures", "verbose"]

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


def verbose() -> bool:
    """Whether the CLI asked for everything (``--verbose``)."""
    return _state["verbose"]


def configure_logging(level: int = logging.INFO) -> None:
    """Log to stderr as ``LEVEL name: message``.

    Args:
        level: the project's level; ``DEBUG`` (``--verbose``) also lets
            third-party libraries and the Spark JVM log everything.
    """
    logging.basicConfig(
        level=level,
        format="%(levelname)s %(name)s: %(message)s",
        force=True,
        handlers=[_CurrentStderr()],
    )
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
