"""The root of every error a user can act on, and how one is told in one line.

Commands catch :class:`DkgError` (and pydantic's ``ValidationError``, a setting's
value refused) and print its message as one line with exit code 2; anything else
is a bug and keeps its traceback. An error class joins by deriving from
:class:`DkgError`, nothing else: no list to keep up to date. A user error raised
inside a Spark task is recognised by the same root (``core.spark.task_errors``).
"""

from __future__ import annotations

from pydantic import ValidationError

__all__ = ["USER_ERRORS", "DkgError", "describe"]


class DkgError(Exception):
    """Something the user can put right: bad input, settings, storage, Kafka, data."""


USER_ERRORS: tuple[type[Exception], ...] = (DkgError, ValidationError)
"""What a command reports as one line rather than a traceback."""


def describe(exc: BaseException) -> str:
    """``exc``'s message; a refused setting as ``path.to.field: why`` for each field."""
    if isinstance(exc, ValidationError):
        return "; ".join(
            f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}" for err in exc.errors()
        )
    return str(exc)
