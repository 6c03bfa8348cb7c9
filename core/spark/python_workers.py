"""Spark's Python workers started before a streaming query needs them.

The first task that runs Python forks Spark's worker daemon, which loads pandas,
pyarrow and the groupings' compiled loops (``pipelines.worker_daemon``): about a
second, then each worker forks from it in milliseconds and is reused. Left to
the query, that second lands on its first micro-batch, and every message that
arrives meanwhile waits for it.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import pyarrow as pa

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["python_workers_starting", "start_python_workers"]

logger = logging.getLogger(__name__)


def _unchanged(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    yield from batches


def start_python_workers(spark: SparkSession) -> None:
    """Run one Python task per core, so their workers are up and idle."""
    started = time.monotonic()
    cores = spark.sparkContext.defaultParallelism
    spark.range(0, cores, 1, cores).mapInArrow(_unchanged, "id long").collect()
    logger.info("Python workers started in %.1f s", time.monotonic() - started)


@contextmanager
def python_workers_starting(spark: SparkSession) -> Iterator[None]:
    """:func:`start_python_workers` on a thread of its own while the block runs.

    A streaming query's start plans in processes of its own (Spark's Python data
    source runners), so the worker daemon loads meanwhile instead of after them,
    on the first micro-batch. Waited for when the block ends.
    """
    thread = threading.Thread(target=_start_or_say_why_not, args=(spark,),
                              name="start-python-workers", daemon=True)  # fmt: skip
    thread.start()
    try:
        yield
    finally:
        thread.join()


def _start_or_say_why_not(spark: SparkSession) -> None:
    try:
        start_python_workers(spark)
    except Exception as exc:  # harmless: the query starts its workers itself
        why = str(exc).splitlines() or [type(exc).__name__]
        logger.warning("Python workers not started ahead of the query: %s", why[0])
