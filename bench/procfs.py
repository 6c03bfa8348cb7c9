"""Process facts the benchmarks read from /proc: CPU time, resident memory, children.

:func:`wait_until_idle` lets a measurement start once a process has gone quiet:
the local broker keeps working for seconds after messages are produced (about
4 CPU-seconds per million here), and a measurement started at once would share
the machine's two cores with that work.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator

__all__ = [
    "PROCESS_KINDS",
    "ProcessSampler",
    "cpu_seconds",
    "descendants",
    "process_kind",
    "read_bytes",
    "rss_mb",
    "session_processes",
    "wait_until_idle",
]

_TICK = os.sysconf("SC_CLK_TCK")
_PAGE = os.sysconf("SC_PAGE_SIZE")


def _stat(pid: int | str) -> list[str]:
    """``/proc/<pid>/stat``'s fields after the command name (``state`` first): the name, in
    brackets, may itself hold spaces and brackets."""
    with open(f"/proc/{pid}/stat") as stat:
        return stat.read().rsplit(")", 1)[1].split()


def _running() -> Iterator[tuple[int, list[str]]]:
    """Every process's id and :func:`_stat` fields (those that end while read left out)."""
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                yield int(entry), _stat(entry)
            except OSError:
                continue


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time of ``pid`` so far."""
    fields = _stat(pid)
    return (int(fields[11]) + int(fields[12])) / _TICK


def read_bytes(pid: int) -> int:
    """Bytes ``pid`` has read so far through read calls: files, pipes and sockets alike."""
    with open(f"/proc/{pid}/io") as io:
        for line in io:
            if line.startswith("rchar:"):
                return int(line.split()[1])
    return 0


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
    for child, fields in _running():
        children.setdefault(int(fields[1]), []).append(child)
    found, frontier = [], [pid]
    while frontier:
        frontier = [child for parent in frontier for child in children.get(parent, [])]
        found.extend(frontier)
    return found


def session_processes(sid: int) -> list[int]:
    """Every process of session ``sid`` still running (zombies left out), wherever its parent."""
    return [pid for pid, fields in _running() if int(fields[3]) == sid and fields[0] != "Z"]


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


def _parent(pid: int) -> int:
    try:
        return int(_stat(pid)[1])
    except OSError:
        return 0


def process_kind(pid: int) -> str:
    """``jvm`` for a Java process, else ``python_workers`` (``gone`` once it has ended)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            program = cmdline.read().split(b"\0", 1)[0]
    except OSError:
        return "gone"
    return "jvm" if program.endswith(b"java") else "python_workers"


PROCESS_KINDS = ("driver", "jvm", "python_workers")


class ProcessSampler(threading.Thread):
    """Every second: resident memory per process kind (driver = this process), CPU time per process."""

    def __init__(
        self, exclude: set[int] = frozenset(), named: dict[int, str] | None = None
    ) -> None:
        """``exclude``: pids left out; ``named``: pids counted under a kind of their own."""
        super().__init__(daemon=True)
        self.exclude = exclude
        self.named = dict(named or {})
        self.kinds = (*PROCESS_KINDS, *sorted(set(self.named.values())))
        self.samples: list[dict[str, float]] = []
        self.cpu_first: dict[int, tuple[str, float]] = {}
        self.cpu_last: dict[int, float] = {}
        self.read_first: dict[int, int] = {}
        self.read_last: dict[int, int] = {}
        self._done = threading.Event()
        self._own_cpu = 0.0  # this thread's CPU time: the measuring, not the driver's work

    def _sample(self) -> None:
        sample = dict.fromkeys((*self.kinds, "workers"), 0.0)
        me = os.getpid()
        jvms: set[int] = set()
        for pid in [me, *descendants(me)]:
            kind = "driver" if pid == me else self.named.get(pid) or process_kind(pid)
            if kind == "jvm":
                jvms.add(pid)
                # A JVM's child that is still "java" is a fork about to exec (a Python
                # worker starting): its pages are the JVM's, counted once already.
                if _parent(pid) in jvms:
                    continue
            if pid in self.exclude or kind not in sample:
                continue
            try:
                cpu, received = cpu_seconds(pid), read_bytes(pid)
            except OSError:
                continue
            sample[kind] += rss_mb(pid)
            sample["workers"] += kind == "python_workers"
            # A process seen first mid-run started mid-run: all its CPU time counts.
            self.cpu_first.setdefault(pid, (kind, cpu if not self.samples else 0.0))
            self.cpu_last[pid] = cpu
            self.read_first.setdefault(pid, received if not self.samples else 0)
            self.read_last[pid] = received
        self.samples.append(sample)

    def run(self) -> None:
        started = time.thread_time()
        self._sample()
        while not self._done.wait(1.0):
            self._sample()
            self._own_cpu = time.thread_time() - started

    def stop(self) -> None:
        self._done.set()
        self.join()

    def cpu_by_kind(self) -> dict[str, float]:
        """CPU-seconds each process kind used while sampled (the driver's without the sampling)."""
        used = dict.fromkeys(self.kinds, 0.0)
        for pid, (kind, first) in self.cpu_first.items():
            used[kind] += self.cpu_last[pid] - first
        used["driver"] -= self._own_cpu
        return {kind: round(value, 1) for kind, value in used.items()}

    def read_mb_by_kind(self) -> dict[str, float]:
        """MB each process kind read while sampled (files, pipes and sockets)."""
        read = dict.fromkeys(self.kinds, 0.0)
        for pid, (kind, _) in self.cpu_first.items():
            read[kind] += (self.read_last[pid] - self.read_first[pid]) / 1e6
        return {kind: round(value, 1) for kind, value in read.items()}

    def summary(self) -> dict[str, dict[str, int]]:
        """Per process kind and in total: the largest RSS (MB) in the first and last quarter."""
        quarter = max(1, len(self.samples) // 4)
        totals = self._with_totals()
        return {kind: {"first_quarter_max": round(max((s[kind] for s in totals[:quarter]), default=0)),
                       "last_quarter_max": round(max((s[kind] for s in totals[-quarter:]), default=0))}
                for kind in (*self.kinds, "total")}  # fmt: skip

    def peak_rss_mb(self) -> dict[str, int]:
        """The largest RSS (MB) per process kind, and of all of them together, over the run."""
        totals = self._with_totals()
        return {kind: round(max((s[kind] for s in totals), default=0)) for kind in (*self.kinds, "total")}

    def _with_totals(self) -> list[dict[str, float]]:
        return [{**s, "total": sum(s[k] for k in self.kinds)} for s in self.samples]

    def per_minute(self) -> list[dict[str, int]]:
        """The largest RSS (MB) per kind in each minute, and the most Python workers alive."""
        minutes = [self.samples[start : start + 60] for start in range(0, len(self.samples), 60)]
        return [{**{kind: round(max(s[kind] for s in minute)) for kind in self.kinds},
                 "total": round(max(sum(s[k] for k in self.kinds) for s in minute)),
                 "workers": int(max(s["workers"] for s in minute))}
                for minute in minutes]  # fmt: skip
