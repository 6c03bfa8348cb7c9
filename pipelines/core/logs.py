"""The one place that sets up logging handlers (only the CLI calls it).

By default the console shows the project's own INFO lines (progress, milestones)
and only warnings from third-party libraries: kafka-python logs every
connection at INFO. ``dkg --verbose`` shows everything at DEBUG, including the
Spark JVM's own log (see :func:`verbose`, read by ``build_spark``).
"""

from __future__ import annotations

import logging

__all__ = ["THIRD_PARTY_LOGGERS", "configure_logging", "verbose"]

# kafka-python logs every connection at INFO and warns about its own event loop
# being slow on a busy machine; its real failures reach us as exceptions.
THIRD_PARTY_LOGGERS = {"kafka": logging.ERROR, "py4j": logging.WARNING, "numba": logging.WARNING,
                       "urllib3": logging.WARNING, "great_expectations": logging.WARNING,
                       "matplotlib": logging.WARNING, "asyncio": logging.WARNING,
                       "filelock": logging.WARNING, "fsspec": logging.WARNING}  # fmt: skip
# py4j logs every JVM call at DEBUG and numba every compilation step: useless even
# when debugging this project, so they stay at WARNING in verbose mode too.
_ALWAYS_QUIET = ("py4j", "numba")

_state = {"verbose": False}


def verbose() -> bool:
    """Whether the CLI asked for everything (``--verbose``)."""
    return _state["verbose"]


def configure_logging(level: int = logging.INFO) -> None:
    """Log to stderr as ``LEVEL name: message``.

    Args:
        level: the project's level; ``DEBUG`` (``--verbose``) also lets
            third-party libraries and the Spark JVM log everything.
    """
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s", force=True)
    _state["verbose"] = level <= logging.DEBUG
    for name, quiet_level in THIRD_PARTY_LOGGERS.items():
        quiet = name in _ALWAYS_QUIET or not _state["verbose"]
        logging.getLogger(name).setLevel(quiet_level if quiet else logging.NOTSET)
