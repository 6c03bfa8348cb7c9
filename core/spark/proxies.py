"""Python's cycle collector, run between micro-batches, so the driver JVM can free their objects.

py4j keeps each method called on a Java object's Python proxy in that proxy, and
the kept method points back at the proxy: every proxy the driver has used is in a
reference cycle, which reference counting never frees. The JVM keeps the object
behind a proxy until the proxy is gone. A micro-batch's proxies (its DataFrame,
session, Arrow collection server, ...) live through the whole batch, so they
reach the collector's oldest generation, and a streaming driver allocates so
little that this generation was collected minutes apart: meanwhile the JVM kept
every batch's DataFrame with its plan, state store RDD and broadcast Hadoop
configuration, and its heap grew batch after batch.
"""

from __future__ import annotations

import gc
import logging
import threading
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from core.spark.foreach_batch import BatchWriter

__all__ = ["COLLECT_EVERY_S", "releasing_proxies"]

logger = logging.getLogger(__name__)

COLLECT_EVERY_S = 30.0
"""A full collection takes about a tenth of a second: a few per minute cost nothing
much, and the JVM holds at most this many seconds of micro-batches."""

_lock = threading.Lock()  # queries run their batches side by side: one collection for all
_last = time.monotonic()


def _collect_if_due(every_s: float) -> None:
    global _last  # one schedule for every query of the process
    if time.monotonic() - _last < every_s or not _lock.acquire(blocking=False):
        return
    try:
        started = time.monotonic()
        found = gc.collect()
        _last = time.monotonic()
        logger.debug("cycle collection: %d objects in %.3f s", found, _last - started)
    finally:
        _lock.release()


def releasing_proxies(writer: BatchWriter, every_s: float = COLLECT_EVERY_S) -> BatchWriter:
    """``writer``, then a full collection if ``every_s`` seconds passed since the last one."""

    def write_batch(df: DataFrame, batch_id: int) -> None:
        writer(df, batch_id)
        _collect_if_due(every_s)

    return write_batch
