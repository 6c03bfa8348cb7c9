"""The Spark driver JVM's console output: errors only by default, everything when verbose.

Three things print to the JVM's stderr: log4j (configured by
``conf/log4j2.properties``), the JVM itself ("WARNING: Using incubator
modules", which no option turns off) and Spark's start-up banners. So the
gateway is started with its stderr on a pipe, and a daemon thread copies it
to this process's stderr, dropping the banners and the known harmless errors
(with their stack traces). Lines go to file descriptor 2 directly, as the JVM's
would, so test output capture of ``sys.stderr`` never sees them.
"""

from __future__ import annotations

import logging
import os
import re
import subprocess
import threading
from collections.abc import Iterable, Mapping
from typing import IO

__all__ = ["NOISE", "JvmStderrFilter", "launch_quiet_gateway"]

logger = logging.getLogger(__name__)

NOISE = re.compile(
    r"Using incubator modules|Using Spark's default log4j profile|Setting default log level"
    r"|To adjust logging level use|StackOverflowError|InterruptedException|Aborting commit"
    r"|NativeCodeLoader|adaptive\.enabled is not supported|Disabling AQE"
    # pyspark's own pandas code, in Python workers, trips a pandas deprecation.
    r"|pyspark/sql/pandas/serializers\.py:\d+: FutureWarning"
)
"""Lines that never help a user: banners, and errors Spark logs when a query stops."""

# A stack trace's lines, or an exception's first line, continue the record above.
_CONTINUATION = re.compile(r"^(\s|Caused by:|Suppressed:|\.\.\.|[\w$.]+(Exception|Error)\b)")


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
        self._dropping = bool(NOISE.search(line))
        return not self._dropping


def _forward(stream: IO[bytes], keep_all: bool) -> None:
    line_filter = JvmStderrFilter()
    for raw in iter(stream.readline, b""):
        if keep_all or line_filter.keep(raw.decode("utf-8", "replace")):
            try:
                os.write(2, raw)
            except OSError:  # stderr closed: nothing left to show the lines on
                return


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
    from pyspark.java_gateway import launch_gateway

    # pyspark keeps its gateway in class attributes; setting them here is the only
    # way to choose how the JVM process is started (its popen_kwargs).
    with SparkContext._lock:  # noqa: SLF001
        if SparkContext._gateway is not None:  # noqa: SLF001
            return
        spark_conf = SparkConf(loadDefaults=False).setAll(_items(conf))
        gateway = launch_gateway(spark_conf, popen_kwargs={"stderr": subprocess.PIPE})
        SparkContext._gateway = gateway  # noqa: SLF001
        SparkContext._jvm = gateway.jvm  # noqa: SLF001
    if gateway.proc is not None and gateway.proc.stderr is not None:
        threading.Thread(target=_forward, args=(gateway.proc.stderr, keep_all),
                         name="jvm-stderr", daemon=True).start()  # fmt: skip


def _items(conf: Mapping[str, str]) -> Iterable[tuple[str, str]]:
    return [(str(k), str(v)) for k, v in conf.items()]
