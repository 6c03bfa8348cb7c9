"""The Spark driver JVM's console output: errors only by default, everything when verbose.

Three things print to the JVM's stderr: log4j (configured by
``conf/log4j2.properties``), the JVM itself ("WARNING: Using incubator
modules", which no option turns off) and Spark's start-up banners. So the
gateway is started with its stderr on a pipe, and a daemon thread copies it
to this process's stderr, dropping the banners and the known harmless errors
(with their stack traces). Lines go to file descriptor 2 directly, as the JVM's
would, so test output capture of ``sys.stderr`` never sees them.

Until the JVM has started, its lines are held back: when it exits instead (a
master URL or a heap size it cannot use), :class:`JvmStartError` carries the
line that says why, and nothing else reaches the console.
"""

from __future__ import annotations

import logging
import os
import re
import threading
from collections.abc import Iterable, Mapping
from typing import IO

__all__ = ["NOISE", "REPORTED", "JvmStartError", "JvmStderrFilter", "launch_quiet_gateway",
           "start_failure"]

logger = logging.getLogger(__name__)

NOISE = re.compile(
    r"Using incubator modules|Using Spark's default log4j profile|Setting default log level"
    r"|To adjust logging level use|StackOverflowError|InterruptedException|Aborting commit"
    r"|NativeCodeLoader|adaptive\.enabled is not supported|Disabling AQE"
    # pyspark's own pandas code, in Python workers, trips a pandas deprecation.
    r"|pyspark/sql/pandas/serializers\.py:\d+: FutureWarning"
)
"""Lines that never help a user: banners, and errors Spark logs when a query stops."""

REPORTED = re.compile(
    r" ERROR (Executor: Exception in task |TaskSetManager: .*failed \d+ times?; aborting job"
    r"|TaskContextImpl: Error in Task\w*Listener|\w*MicroBatchExecution: Query .* terminated with)"
)
"""Records of a failed task or streaming query: the query's exception carries the same error
to the driver, which reports it (``core.spark.task_errors``); ``dkg -vv`` shows them."""

# A stack trace's lines, an exception's first line, or a Python traceback quoted in
# one (a task's error, returned by a Python worker, ends with "module.Class: message")
# continue the record above.
_CONTINUATION = re.compile(r"^(\s|Caused by:|Suppressed:|\.\.\.|[\w$.]+(Exception|Error)\b"
                           r"|[\w$]+(\.[\w$]+)+: |Traceback \(most recent call last\):"
                           r"|During handling of the above exception|The above exception was)")


class JvmStderrFilter:
    """Decides line by line what to keep; a dropped record takes its stack trace along."""

    def __init__(self) -> None:
        """Start outside any record."""
        self._dropping = False

    def keep(self, line: str) -> bool:
        """Whether ``line`` (one line of JVM stderr) should reach the console."""
        if _CONTINUATION.match(line):
            self._dropping = self._dropping or bool(NOISE.search(line))
            return not self._dropping
        self._dropping = bool(NOISE.search(line) or REPORTED.search(line))
        return not self._dropping


class JvmStartError(RuntimeError):
    """The driver JVM exited before it started; the message is its own reason."""


# A log4j record ("26/11/25 03:39:52 WARN Utils: ..."), a stack frame, or the
# launcher's closing lines: none of them says why the JVM did not start.
_NOT_A_REASON = re.compile(
    r"^(\S+ \S+ (TRACE|DEBUG|INFO|WARN) |\s+at |\s*$|Error: A fatal exception has occurred)"
)
_THREAD_PREFIX = re.compile(r'^Exception in thread "[^"]*" ([\w$.]+: )?')


def start_failure(lines: Iterable[str]) -> str | None:
    """The line of a JVM's stderr that says why it did not start, or ``None``.

    ``Exception in thread "main" org.apache.spark.SparkException: Master must ...``
    gives ``Master must ...``; ``Invalid maximum heap size: -Xmxlots`` stays as it is.
    """
    line_filter = JvmStderrFilter()
    for line in lines:
        if not line_filter.keep(line) or _NOT_A_REASON.match(line):
            continue
        return _THREAD_PREFIX.sub("", line.strip()).removeprefix("Error: ")
    return None


class _JvmStderr:
    """Reads the JVM's stderr; holds its lines back until :meth:`release`."""

    def __init__(self, stream: IO[bytes], keep_all: bool) -> None:
        self._stream = stream
        self._keep_all = keep_all
        self._lock = threading.Lock()
        self._held: list[bytes] | None = []
        self._filter = JvmStderrFilter()
        self.thread = threading.Thread(target=self._run, name="jvm-stderr", daemon=True)

    def held_lines(self) -> list[str]:
        """Every line read so far (call once the stream has ended)."""
        with self._lock:
            return [raw.decode("utf-8", "replace") for raw in self._held or ()]

    def release(self) -> None:
        """The JVM started: write what it said so far, then forward as it comes."""
        with self._lock:
            held, self._held = self._held or [], None
            _write([raw for raw in held if self._keep(raw)])

    def _keep(self, raw: bytes) -> bool:
        return self._keep_all or self._filter.keep(raw.decode("utf-8", "replace"))

    def _run(self) -> None:
        for raw in iter(self._stream.readline, b""):
            with self._lock:
                if self._held is not None:
                    self._held.append(raw)
                    continue
                if self._keep(raw) and not _write([raw]):
                    return
        self._stream.close()


def _write(lines: list[bytes]) -> bool:
    try:
        for raw in lines:
            os.write(2, raw)
    except OSError:  # stderr closed: nothing left to show the lines on
        return False
    return True


def launch_quiet_gateway(conf: Mapping[str, str], keep_all: bool = False) -> None:
    """Start the py4j gateway (the driver JVM) with its stderr filtered.

    Does nothing if this process already has a gateway. Must run before
    ``SparkSession.builder.getOrCreate()``, which then reuses the gateway.

    Args:
        conf: the settings that only apply at JVM start (memory, Java options),
            passed to spark-submit like pyspark does.
        keep_all: forward every line (``--verbose``).
    """
    from pyspark import SparkConf, SparkContext
    from pyspark.errors import PySparkRuntimeError
    from pyspark.java_gateway import launch_gateway

    # pyspark keeps its gateway in class attributes; setting them here is the only
    # way to choose how the JVM process is started (its popen_kwargs).
    with SparkContext._lock:  # noqa: SLF001
        if SparkContext._gateway is not None:  # noqa: SLF001
            return
        spark_conf = SparkConf(loadDefaults=False).setAll(_items(conf))
        # A pipe of our own: pyspark drops the process when it exits before
        # starting, and with it the one line that says why.
        read_fd, write_fd = os.pipe()
        stderr = _JvmStderr(os.fdopen(read_fd, "rb"), keep_all)
        stderr.thread.start()
        try:
            gateway = launch_gateway(spark_conf, popen_kwargs={"stderr": write_fd})
        except (PySparkRuntimeError, OSError) as exc:
            os.close(write_fd)
            stderr.thread.join(timeout=10)  # the JVM has exited: its stderr ends
            reason = start_failure(stderr.held_lines())
            if keep_all:  # --verbose: every line the JVM wrote, then the reason
                stderr.release()
            raise JvmStartError(reason or str(exc)) from exc
        os.close(write_fd)
        SparkContext._gateway = gateway  # noqa: SLF001
        SparkContext._jvm = gateway.jvm  # noqa: SLF001
    stderr.release()


def _items(conf: Mapping[str, str]) -> Iterable[tuple[str, str]]:
    return [(str(k), str(v)) for k, v in conf.items()]
