"""Process facts the benchmarks read from /proc: CPU time, resident memory, children.

:func:`wait_until_idle` lets a measurement start once a process has gone quiet:
the local broker keeps working for seconds after messages are produced (about
4 CPU-seconds per million here), and a measurement started at once would share
the machine's two cores with that work.
"""

from __future__ import annotations

import os
import time

__all__ = ["cpu_seconds", "descendants", "rss_mb", "wait_until_idle"]

_TICK = os.sysconf("SC_CLK_TCK")
_PAGE = os.sysconf("SC_PAGE_SIZE")


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time of ``pid`` so far."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICK


def rss_mb(pid: int) -> float:
    """Resident memory of ``pid`` in MB (0 once it has ended)."""
    try:
        with open(f"/proc/{pid}/statm") as statm:
            return int(statm.read().split()[1]) * _PAGE / 1e6
    except OSError:
        return 0.0


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (children, their children, ...)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    parent = int(stat.read().rsplit(")", 1)[1].split()[1])
            except OSError:
                continue
            children.setdefault(parent, []).append(int(entry))
    found, frontier = [], [pid]
    while frontier:
        frontier = [child for parent in frontier for child in children.get(parent, [])]
        found.extend(frontier)
    return found


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
