"""Call one task's console script in this process, its output in the task's files.

What a ``python_wheel_task`` does on Databricks, without installing a wheel:
import ``module``, call ``function(ARGS)``, and take its return value as the exit
code. Everything the task writes goes to its log: Python's ``sys.stdout`` and
``sys.stderr`` (logging included) and file descriptors 1 and 2, which the
Spark JVM's forwarded stderr and native libraries write to. What it prints to
``sys.stdout``, its result, is also kept on its own in an output file.

``python -m pipelines.job_specs OUTPUT module:function ARGS...`` (:func:`main`)
does the same in a process of its own, stdout and stderr already on the log,
for a task that cannot share the job's process.
"""

from __future__ import annotations

import importlib
import io
import os
import signal
import sys
import time
import traceback
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any, TextIO

__all__ = ["TaskTimeout", "call_task", "captured", "deadline", "main"]


class TaskTimeout(BaseException):
    """A task ran past its ``timeout_seconds``.

    Not an ``Exception``, so the task's own ``except Exception`` cannot swallow it.
    """


class _Tee(io.TextIOBase):
    """A text stream writing to two others: the log and the output file."""

    def __init__(self, *streams: TextIO) -> None:
        super().__init__()
        self._streams = streams

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return "utf-8"

    def fileno(self) -> int:
        return self._streams[0].fileno()

    def isatty(self) -> bool:
        return False

    def write(self, text: str) -> int:
        # A closed one is the output file of a task that ended; a thread of that
        # task may still print.
        for stream in self._streams:
            if not stream.closed:
                stream.write(text)
        return len(text)

    def flush(self) -> None:
        for stream in self._streams:
            if not stream.closed:
                stream.flush()


def _exit_code(code: Any) -> int:
    # SystemExit(None) is 0, SystemExit("message") prints the message and is 1.
    if code is None or isinstance(code, int):
        return int(code or 0)
    print(code, file=sys.stderr)
    return 1


def call_task(target: str, argv: Sequence[str]) -> int:
    """Call ``module:function`` with ``argv``; its exit code.

    ``sys.argv`` is set for console scripts that read it. A ``SystemExit`` gives
    its code; any other exception is printed with its traceback and gives 1, as
    an uncaught exception does to a Python process.
    """
    saved = sys.argv
    module_name, _, function_name = target.partition(":")
    sys.argv = [function_name, *argv]
    try:
        function = getattr(importlib.import_module(module_name), function_name)
        result = function(list(argv))
    except SystemExit as exc:
        return _exit_code(exc.code)
    except Exception:
        traceback.print_exc()
        return 1
    finally:
        sys.argv = saved
    return result if isinstance(result, int) else 0


@contextmanager
def _descriptors_to(fd: int) -> Iterator[None]:
    saved = [os.dup(1), os.dup(2)]
    try:
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        yield
    finally:
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for copy in saved:
            os.close(copy)


@contextmanager
def captured(log_path: Path, output_path: Path) -> Iterator[None]:
    """Send this process's output to ``log_path`` (appended) while the block runs.

    ``sys.stdout`` also goes to ``output_path``. Streams stay usable after the
    block: a thread that kept one writes to the console again, not to a closed file.
    """
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    with log_path.open("a", encoding="utf-8") as log, \
            output_path.open("w", encoding="utf-8") as output:  # fmt: skip
        # Line-buffered text over descriptors 1 and 2 (not closed with the block):
        # Python's lines and the JVM's share the log's offset and stay in order.
        stdout = open(1, "w", encoding="utf-8", buffering=1, closefd=False)
        stderr = open(2, "w", encoding="utf-8", buffering=1, closefd=False)
        with _descriptors_to(log.fileno()):
            try:
                with redirect_stdout(_Tee(stdout, output)), redirect_stderr(stderr):  # type: ignore[arg-type]
                    yield
            finally:
                stdout.flush()
                stderr.flush()


@contextmanager
def deadline(seconds: int | None) -> Iterator[None]:
    """Raise :class:`TaskTimeout` in the block after ``seconds`` (main thread only).

    An alarm set before (a test runner's time limit, say) is set again afterwards
    with the time it had left, so it still goes off, if late.
    """
    if seconds is None:
        yield
        return

    def expire(_signum: int, _frame: Any) -> None:
        raise TaskTimeout(f"timed out after {seconds} s")

    started = time.monotonic()
    previous = signal.signal(signal.SIGALRM, expire)
    outer, _interval = signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if outer > 0:
            left = outer - (time.monotonic() - started)
            signal.setitimer(signal.ITIMER_REAL, max(left, 0.001))


def main(argv: Sequence[str]) -> int:
    """``OUTPUT module:function ARGS...``: call the task, its stdout also into OUTPUT."""
    output_path, target, *arguments = argv
    with Path(output_path).open("w", encoding="utf-8") as output, \
            redirect_stdout(_Tee(sys.stdout, output)):  # type: ignore[arg-type]  # fmt: skip
        code = call_task(target, arguments)
        sys.stdout.flush()
    return code
