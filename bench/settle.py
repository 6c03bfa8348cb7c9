"""Wait for a process to go quiet before a measurement starts.

The local broker keeps working for seconds after messages are produced (about
4 CPU-seconds per million here); a measurement started at once would share the
machine's two cores with that work.
"""

from __future__ import annotations

import os
import time

__all__ = ["cpu_seconds", "wait_until_idle"]

_TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time of ``pid`` so far."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICK


def wait_until_idle(pid: int, busy_below: float = 0.05, window_s: float = 1.0,
                    timeout_s: float = 120.0) -> float:  # fmt: skip
    """Block until ``pid`` uses less than ``busy_below`` of a core over ``window_s``.

    Returns:
        The seconds waited (``timeout_s`` if it never went quiet).
    """
    started = time.monotonic()
    while time.monotonic() - started < timeout_s:
        before = cpu_seconds(pid)
        time.sleep(window_s)
        if cpu_seconds(pid) - before < busy_below * window_s:
            break
    return time.monotonic() - started
