"""Continuous mode: the medallion's queries run side by side while messages arrive.

The run's queries (``pipelines.medallion.stages``) run at once on
processing-time triggers, each from its own checkpoint, and gold is refreshed from what silver holds as soon
as the silver query commits a micro-batch. Sinks are the finite
run's (idempotent per micro-batch), so stopping at any point and resuming, in
either mode, loses and repeats nothing.
A query starts once its input table exists (the previous stage's first batch).
"""

from __future__ import annotations

import gc
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.streaming import StreamingQuery

from core.run_plan import RunPlan
from core.spark.foreach_batch import BatchWriter
from core.spark.python_workers import start_python_workers
from core.stages import RunContext, Stage, start_query
from core.storage import Storage
from core.tables.base import TableBackend
from core.tables.delta_log import newest_version
from core.warehouse import Warehouse
from gold.refresh import partials_feed, refresh_gold
from pipelines.medallion import Source, StageTimes, stages
from silver.schemas import WORKER_WINDOWS

__all__ = ["GoldRefresh", "run_continuous"]

logger = logging.getLogger(__name__)

SNAPSHOT_EVERY_S = 5.0
"""About how often a continuous run records each splitter's routing snapshot. One
after every micro-batch cost the driver about 13 ms of each 90-ms round (a commit
of the snapshots, reading them back, decoding the groupings for gold's hot keys and
committing those; measured per call site, docs/benchmarks.md); hot keys every few
seconds show the same pools growing and shrinking."""


@dataclass(frozen=True)
class GoldRefresh:
    """One gold refresh: when it ran, and how far silver was when it began.

    Attributes:
        started_at: wall-clock time (``time.time()``) the refresh began.
        finished_at: wall-clock time the refresh finished.
        windows_version: the ``silver.worker_windows`` version when the refresh
            began; everything up to it is in gold.
        tuples: the run's routed tuples gold holds after the refresh.
    """

    started_at: float
    finished_at: float
    windows_version: int | None
    tuples: int


def _await_silver(storage: Storage, windows: str, seen: int | None, committed: threading.Event,
                  timeout_s: float) -> int | None:  # fmt: skip
    """The worker windows' table version once it has moved past ``seen``, or after ``timeout_s``.

    ``committed`` is set by the silver query's writer after each micro-batch (it runs
    in this process), so the wait costs nothing between batches: looking the log up
    ten times a second cost the driver 6 % of its CPU, a wake-up and a file test
    each (measured, docs/benchmarks.md). The log, not the signal, says what is
    committed; the timeout covers writers elsewhere.
    """
    deadline = time.monotonic() + timeout_s
    while True:
        newest = newest_version(storage, windows, -1 if seen is None else seen)
        version = None if newest < 0 else newest  # None: no table yet
        remaining = deadline - time.monotonic()
        if version != seen or remaining <= 0:
            return version
        committed.wait(remaining)
        committed.clear()


def _signalling(writer: BatchWriter, committed: threading.Event) -> BatchWriter:
    """``writer``, setting ``committed`` after each micro-batch it handled."""

    def write_batch(df: DataFrame, batch_id: int) -> None:
        writer(df, batch_id)
        committed.set()

    return write_batch


def _start(stage: Stage, trigger_s: float) -> StreamingQuery:
    return start_query(stage, processingTime=f"{trigger_s} seconds")


def run_continuous(spark: SparkSession, source: Source, plan: RunPlan, warehouse: Warehouse,
                   backend: TableBackend, finished: Callable[[], bool], trigger_s: float,
                   gold_every_s: float = 2.0,
                   on_refresh: Callable[[GoldRefresh], None] | None = None) -> StageTimes:  # fmt: skip
    """Run every stage at once until ``finished()`` says so.

    Args:
        spark: the session.
        source: a Kafka topic or a streaming DataFrame with Kafka's columns (see
            :func:`pipelines.medallion.run_finite`).
        plan: the run.
        warehouse: where tables and checkpoints live.
        backend: the Delta backend.
        finished: asked before each gold refresh; True stops the run after that
            refresh.
        trigger_s: processing-time trigger of each query.
        gold_every_s: longest pause between gold refreshes (one also starts as soon
            as the silver query commits a micro-batch).
        on_refresh: told about each gold refresh (latency measurement, progress).

    Returns:
        Spark's phase profile per query, as the finite run gives it.
    """
    queries: dict[str, StreamingQuery] = {}
    times = StageTimes()
    started = time.monotonic()
    feed = partials_feed(warehouse, plan)
    run = RunContext(spark, source, plan, warehouse, backend,
                     snapshot_every=max(1, round(SNAPSHOT_EVERY_S / trigger_s)))  # fmt: skip
    windows = str(warehouse.table_uri(*WORKER_WINDOWS))
    windows_version: int | None = None
    committed = threading.Event()  # the last stage wrote a micro-batch
    all_started = False
    start_python_workers(spark)
    # What lives now (the session, the libraries) lives as long as the run. Frozen, it
    # is no longer scanned by the full collections that free each micro-batch's py4j
    # proxies (core.spark.proxies), 60 ms apiece otherwise.
    gc.collect()
    gc.freeze()
    try:
        while True:
            all_started = all_started or _start_ready_stages(run, queries, trigger_s, committed)
            _raise_if_failed(queries)
            windows_version = _await_silver(warehouse.storage, windows, windows_version,
                                            committed, gold_every_s)  # fmt: skip
            # Asked before the refresh, so the refresh that follows covers what it saw.
            last_round = finished()
            refresh_started = time.time()
            # False: no worker windows yet, or nothing new since the last refresh.
            if refresh_gold(backend, warehouse, plan, time.monotonic() - started,
                            feed):  # fmt: skip
                if on_refresh is not None:
                    on_refresh(GoldRefresh(refresh_started, time.time(), windows_version,
                                           feed.partials.tuples))  # fmt: skip
            if last_round:
                break
    finally:
        for name, query in queries.items():
            query.stop()
            for progress in query.recentProgress:
                times.add_progress(name, progress)
    times.seconds["total"] = time.monotonic() - started
    return times


def _start_ready_stages(run: RunContext, queries: dict[str, StreamingQuery], trigger_s: float,
                        committed: threading.Event) -> bool:  # fmt: skip
    """Start each stage whose input table exists; True once every stage runs.

    The last stage (gold's input) sets ``committed`` after each micro-batch.
    """
    chain = stages(run)
    for previous, stage in zip((None, *chain), chain, strict=False):
        if stage.name in queries:
            continue
        if previous is not None and run.backend.version(
                run.warehouse.table_uri(*previous.output)) is None:  # fmt: skip
            return False  # its input table has no commit yet
        built = stage.build(run)
        if stage is chain[-1]:
            built = replace(built, writer=_signalling(built.writer, committed))
        queries[stage.name] = _start(built, trigger_s)
        logger.info("started the %s query of run %s", stage.name, run.plan.run_id)
    return True


def _raise_if_failed(queries: dict[str, StreamingQuery]) -> None:
    for query in queries.values():
        error = query.exception()
        if error is not None:
            raise error
