"""Gold tables of one run, rebuilt from silver (batch, idempotent).

Key counts, worker loads and the distribution metrics come from the workers'
partials (``silver.worker_windows`` and ``silver.worker_latency``), which a
:class:`RunPartialsFeed` keeps added up between refreshes so that each one reads
only silver's new commits, and a refresh publishes the rows of the windows new
partials reached (a window's ``throughput`` is the run's as of then) and the hot
keys of the new routing snapshots. A refresh replaces the rows of the windows
it rebuilt (the tables are partitioned by run and window, so that is a swap of
files) and appends the new hot keys; each write's application transaction is
the run's last silver micro-batch it was built from, so refreshing again before
the run's silver query commits another batch changes nothing (other runs'
commits to the shared silver tables included).
"""

from __future__ import annotations

import logging

import pyarrow as pa

from core.run_plan import RunPlan
from core.tables.base import TableBackend
from core.tables.sink import written_everywhere
from core.warehouse import Warehouse
from gold.hot_keys import hot_keys_from_snapshots
from gold.metrics.partials import RunPartials
from gold.partials_feed import RunPartialsFeed
from gold.schemas import (
    CUMULATIVE_WINDOW_START_MS,
    DISTRIBUTION_METRICS,
    HOT_KEYS,
    KEY_COUNTS,
    WORKER_BUSY,
    WORKER_LOAD,
)
from silver.schemas import ROUTING_SNAPSHOTS, WORKER_LATENCY, WORKER_WINDOWS
from silver.schemas import WORKER_BUSY as SILVER_WORKER_BUSY

__all__ = ["partials_feed", "refresh_gold"]

logger = logging.getLogger(__name__)

_WINDOWED = ["run_id", "window_start_ms"]  # the partitions of gold's per-window tables
# Windows whose sums a feed keeps after a refresh: the one filling now and the two
# before it, whose worker windows may still be in flight. Older ones are read again
# from silver if partials still reach them (see RunPartials.release).
_WINDOWS_HELD = 3


def partials_feed(warehouse: Warehouse, plan: RunPlan) -> RunPartialsFeed:
    """A new feed of the run's worker partials; pass it to every refresh."""

    def partials() -> RunPartials:
        return RunPartials(plan.workers, plan.run.aggregation_window_ms, plan.speed,
                           plan.run.process_ms)  # fmt: skip

    silver = [warehouse.table_uri(*table)
              for table in (WORKER_WINDOWS, WORKER_LATENCY, ROUTING_SNAPSHOTS)]  # fmt: skip
    busy = warehouse.table_uri(*SILVER_WORKER_BUSY) if plan.run.work == "cpu" else None
    return RunPartialsFeed(warehouse.storage, *silver, plan.run_id, partials, busy)


def _of_run(rows: pa.Table, plan: RunPlan) -> pa.Table:
    return rows.add_column(0, "run_id", pa.array([plan.run_id] * rows.num_rows, pa.string()))


def refresh_gold(backend: TableBackend, warehouse: Warehouse, plan: RunPlan,
                 processing_seconds: float, feed: RunPartialsFeed | None = None) -> bool:  # fmt: skip
    """Rebuild one run's gold rows; False when silver has nothing new for the run.

    Args:
        backend: the Delta backend.
        warehouse: where the tables are.
        plan: the run (its workers, grouping, windows and queue model).
        processing_seconds: the routing's time so far (the metrics' throughput).
        feed: the run's partials feed from earlier refreshes (:func:`partials_feed`);
            None reads the run's partials from the start.
    """
    windows = warehouse.table_uri(*WORKER_WINDOWS)
    # The run's last silver micro-batch: other runs' commits to the shared silver
    # tables change nothing of this run's gold, so they never trigger a rewrite.
    batch = backend.transaction_version(windows, plan.query_id("silver"))
    if batch is None:
        return False
    app_id = plan.query_id("gold")
    gold = {table: warehouse.table_uri(*table) for table in
            (KEY_COUNTS, WORKER_LOAD, DISTRIBUTION_METRICS, HOT_KEYS, WORKER_BUSY)}  # fmt: skip
    if written_everywhere(backend, [gold[DISTRIBUTION_METRICS]], app_id, batch):
        return False
    feed = feed if feed is not None else partials_feed(warehouse, plan)
    feed.advance()
    if feed.partials.tuples == 0:
        # Upstream tables can exist before any tuple of the run reached them (a
        # stage starts on an empty table); an empty frame has no column types
        # to create gold's tables with.
        return False
    touched = feed.partials.take_touched()  # only these windows' rows changed
    run = [plan.run_id]
    # A window's rows are rebuilt whole: replace them, one partition per run and window.
    partitions = {"run_id": run, "window_start_ms": touched}
    backend.replace(gold[KEY_COUNTS], _of_run(feed.partials.key_counts(touched), plan),
                    partitions, app_id, batch, _WINDOWED)  # fmt: skip
    backend.replace(gold[WORKER_LOAD], _of_run(feed.partials.worker_load(touched), plan),
                    partitions, app_id, batch, _WINDOWED)  # fmt: skip
    busy = feed.take_busy()
    if busy is not None:  # physical mode: each worker's busy time per micro-batch, as measured
        backend.merge(gold[WORKER_BUSY], _of_run(busy, plan), ["run_id", "batch_id", "worker"],
                      app_id, batch, ["run_id"])  # fmt: skip
    snapshots, whole_run = feed.take_snapshots()
    hot = hot_keys_from_snapshots(snapshots, plan.grouping, plan.workers, plan.params)
    if len(hot) and whole_run:  # from every snapshot of the run: its hot keys whole
        backend.replace(gold[HOT_KEYS], hot, {"run_id": run}, app_id, batch, ["run_id"])
    elif len(hot):
        backend.append(gold[HOT_KEYS], hot, app_id, batch, ["run_id"])
    # Last: its transaction is the one checked above, so a refresh cut short is redone.
    metrics = _of_run(feed.partials.result(processing_seconds, touched).to_table(), plan)
    backend.replace(gold[DISTRIBUTION_METRICS], metrics,
                    {**partitions, "window_start_ms": [CUMULATIVE_WINDOW_START_MS, *touched]},
                    app_id, batch, _WINDOWED)  # fmt: skip
    # Published: only the newest windows still take partials as the run goes on.
    feed.partials.release(_WINDOWS_HELD)
    logger.info("gold refreshed for run %s up to its silver batch %d", plan.run_id, batch)
    return True
