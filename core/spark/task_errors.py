"""A streaming query that failed on one of the project's own errors, told as that error's line.

An error raised inside a Spark task (a Kafka range whose messages are gone, a
broker that stopped answering) or in a Python data source's planning reaches
the driver wrapped several times over: the task's ``PythonException``, the
foreachBatch function's traceback as py4j returns it, and the query's
``StreamingQueryException`` with its plan. Each wrapper keeps the original
exception's last line (``core.kafka.admin.BrokerError: t2[0]: ...``) as text,
and only as text: the exception object stayed in the Python worker.

:func:`task_failure` finds that line. When it names a class the CLI reports
as a user mistake, it gives back a :class:`TaskFailure` with the original
message (the project's errors name their topic, partition, offsets and likely
cause themselves); anything else, a bug, is left to its traceback.
:func:`hide_reported_failures` keeps py4j's own ERROR record of the same
failure off the console, and ``core.spark.jvm_output`` drops the JVM's.
"""

from __future__ import annotations

import importlib
import logging
import re
from collections.abc import Iterator

from core.errors import DkgError

__all__ = ["TaskFailure", "hide_reported_failures", "task_failure"]

# The last line of a Python traceback whose exception is one of the project's:
# "core.kafka.admin.BrokerError: t2[0]: no messages past offset 438 ...".
_ERROR_LINE = re.compile(
    r"^(?P<module>(?:core|bronze|silver|gold|pipelines)(?:\.\w+)+)\.(?P<name>[A-Z]\w*): "
    r"(?P<message>.+)$",
    re.MULTILINE,
)
# "=== Streaming Query ===\nIdentifier: silver [id = ..." in a StreamingQueryException.
_QUERY = re.compile(r"^Identifier: (?P<name>\S+) \[id = ", re.MULTILINE)
_SQLSTATE = re.compile(r"\s*SQLSTATE: \S+.*$")
_PROXY_ERROR = "exception while executing the Python Proxy"


class TaskFailure(DkgError, RuntimeError):
    """A Spark query stopped on a user error raised where Spark ran the project's code."""


def _texts(exc: BaseException | None) -> Iterator[str]:
    """``exc`` and the exceptions it was raised from or during, as text, outermost first."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        yield str(exc)
        exc = exc.__cause__ or exc.__context__


def _project_class(module: str, name: str) -> type[BaseException] | None:
    """The exception class ``module.name`` of this project, if there is one."""
    try:
        found = getattr(importlib.import_module(module), name, None)
    except ImportError:
        return None
    return found if isinstance(found, type) and issubclass(found, BaseException) else None


def task_failure(exc: BaseException) -> TaskFailure | None:
    """The user error that stopped a Spark query, found in ``exc``'s text; None for anything else.

    Only the first of the project's exceptions in the text counts: the one that
    failed the task (the same line repeats in every wrapper). Runs on the
    driver, without Spark: the text is all it reads.

    Args:
        exc: what the driver caught (``StreamingQueryException``, ``Py4JJavaError``,
            ``PythonException``, or anything else).
    """
    text = "\n".join(_texts(exc))
    found = _ERROR_LINE.search(text)
    if found is None:
        return None
    error_class = _project_class(found["module"], found["name"])
    if error_class is None or not issubclass(error_class, DkgError):
        return None
    message = _SQLSTATE.sub("", found["message"]).strip()
    query = _QUERY.search(text)
    return TaskFailure(f"the {query['name']} query stopped: {message}" if query else message)


def _downgrade_proxy_error(record: logging.LogRecord) -> bool:
    if _PROXY_ERROR not in record.getMessage():
        return True
    record.levelno, record.levelname = logging.DEBUG, "DEBUG"
    return logging.getLogger().isEnabledFor(logging.DEBUG)


def hide_reported_failures() -> None:
    """Log py4j's report of a failed foreachBatch function at DEBUG instead of ERROR.

    py4j logs every exception a Python function called from the JVM raises,
    traceback included; the query's own exception carries the same error to
    the caller, which reports it (the CLI: in one line). Safe to call twice.
    """
    py4j = logging.getLogger("py4j.clientserver")
    if _downgrade_proxy_error not in py4j.filters:
        py4j.addFilter(_downgrade_proxy_error)
