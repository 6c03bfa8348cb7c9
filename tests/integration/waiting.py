"""Waiting with a deadline: every wait of the tests ends, naming what it waited for.

A wait that fails says what it waited for, how long, and what it saw last, so a
stuck CI run reads as a failure with its cause, not as a timeout with none.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from core.tables import DeltaRsBackend

__all__ = ["await_query", "join_thread", "wait_for_version", "wait_until"]

T = TypeVar("T")


def wait_until(what: str, probe: Callable[[], T], done: Callable[[T], bool] = bool,
               timeout_s: float = 120, interval_s: float = 0.1) -> T:  # fmt: skip
    """Call ``probe`` until ``done`` holds for its value; that value, or fail after ``timeout_s``.

    Args:
        what: what is awaited, as the failure message names it.
        probe: reads the current state (a table's version, a topic's existence, ...).
        done: whether the state read is the awaited one.
        timeout_s: seconds to wait at most.
        interval_s: pause between two reads.
    """
    deadline = time.monotonic() + timeout_s
    while True:
        seen = probe()
        if done(seen):
            return seen
        if time.monotonic() >= deadline:
            raise AssertionError(f"waited {timeout_s:.0f} s for {what}; last saw {seen!r}")
        time.sleep(interval_s)


def wait_for_version(path: str | Path, version: int, timeout_s: float = 120) -> None:
    """Return once the table at ``path`` has ``version``; fail after ``timeout_s``."""
    backend = DeltaRsBackend()

    def current() -> int | None:
        return backend.version(path) if (Path(path) / "_delta_log").exists() else None

    wait_until(f"{path} to reach version {version}", current,
               lambda seen: seen is not None and seen >= version, timeout_s, 0.05)  # fmt: skip


def join_thread(thread: threading.Thread, timeout_s: float = 120) -> None:
    """Join ``thread``; fail if it is still running after ``timeout_s``."""
    thread.join(timeout_s)
    if thread.is_alive():
        raise AssertionError(
            f"waited {timeout_s:.0f} s for thread {thread.name} to end; it still runs"
        )


def await_query(query: Any, timeout_s: float = 300) -> None:
    """Wait for a streaming query (``availableNow``) to finish; stop it and fail after ``timeout_s``.

    Spark's ``awaitTermination(timeout)`` returns ``False`` on a timeout instead
    of failing; a query that never ends would otherwise pass unnoticed or hang.
    """
    if query.awaitTermination(timeout_s):
        return
    last = query.lastProgress
    query.stop()
    raise AssertionError(f"waited {timeout_s:.0f} s for streaming query {query.name or query.id} "
                         f"to finish; last progress: {last}")  # fmt: skip
