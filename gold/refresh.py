"""Gold tables of one run, rebuilt from silver (batch, idempotent).

Key counts and worker loads come from ``silver.worker_windows`` (the merged
WorkerBolt partials), the distribution metrics from ``silver.routed`` through
the simulator's accumulator, which a :class:`RoutedMetricsFeed` keeps between
refreshes so that each one reads only silver's new commits. Every write is a
merge on the table's keys whose application transaction is the silver version
it was built from, so refreshing twice from the same silver data changes nothing.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

import pandas as pd
import pyarrow.compute as pc

from core.tables.base import TableBackend
from core.warehouse import Warehouse
from gold.hot_keys import hot_keys_from_snapshots
from gold.metrics import RunMetricsAccumulator
from gold.routed_feed import RoutedMetricsFeed
from gold.transforms import key_counts, metrics_frame, worker_load

__all__ = ["GoldSettings", "refresh_gold", "routed_feed"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class GoldSettings:
    """What the gold refresh needs to know about a run."""

    run_id: str
    workers: int
    grouping: str
    params: dict[str, Any] = field(default_factory=dict)
    aggregation_window_ms: int = 60_000
    process_ms: float = 1.0
    speed: float = 1.0


def _run_rows(backend: TableBackend, path, run_id: str) -> pd.DataFrame:
    table = backend.read(path)
    return table.filter(pc.equal(table["run_id"], run_id)).to_pandas()


def routed_feed(warehouse: Warehouse, settings: GoldSettings) -> RoutedMetricsFeed:
    """A new metrics feed of the run's ``silver.routed`` rows; pass it to every refresh."""

    def accumulator() -> RunMetricsAccumulator:
        return RunMetricsAccumulator(settings.workers, settings.aggregation_window_ms,
                                     settings.process_ms, settings.speed)  # fmt: skip

    return RoutedMetricsFeed(warehouse.storage, warehouse.table_uri("silver", "routed"),
                             settings.run_id, accumulator)


def refresh_gold(backend: TableBackend, warehouse: Warehouse, settings: GoldSettings,
                 processing_seconds: float, feed: RoutedMetricsFeed | None = None) -> bool:  # fmt: skip
    """Rebuild one run's gold rows; False when silver has nothing new for the run.

    Args:
        backend: the Delta backend.
        warehouse: where the tables are.
        settings: the run.
        processing_seconds: the routing's time so far (the metrics' throughput).
        feed: the run's metrics feed from earlier refreshes (:func:`routed_feed`);
            None reads the run's routed rows from the start.
    """
    windows_path = warehouse.table_uri("silver", "worker_windows")
    version = backend.version(windows_path)
    if version is None:
        return False
    app_id = f"gold-refresh-{settings.run_id}"
    gold = {name: warehouse.table_uri("gold", name)
            for name in ("key_counts", "worker_load", "distribution_metrics", "hot_keys")}  # fmt: skip
    last = backend.transaction_version(gold["distribution_metrics"], app_id)
    if last is not None and last >= version:
        return False
    partials = _run_rows(backend, windows_path, settings.run_id)
    if partials.empty:
        # Upstream tables can exist before any tuple of the run reached them (a
        # stage starts on an empty table); an empty frame has no column types
        # to create gold's tables with.
        return False
    window = settings.aggregation_window_ms
    backend.merge(gold["key_counts"], key_counts(partials, window),
                  ["run_id", "window_start_ms", "key"], app_id, version)  # fmt: skip
    backend.merge(gold["worker_load"], worker_load(partials, settings.workers, window),
                  ["run_id", "window_start_ms", "worker"], app_id, version)  # fmt: skip
    feed = feed if feed is not None else routed_feed(warehouse, settings)
    feed.advance()
    metrics = metrics_frame(feed.accumulator, processing_seconds)
    metrics.insert(0, "run_id", settings.run_id)
    metrics["window_start_ms"] = metrics["window_start_ms"].fillna(-1)  # cumulative: no window
    backend.merge(gold["distribution_metrics"], metrics, ["run_id", "scope", "window_start_ms"],
                  app_id, version)  # fmt: skip
    snapshots = _run_rows(backend, warehouse.table_uri("silver", "routing_snapshots"),
                          settings.run_id)  # fmt: skip
    hot = hot_keys_from_snapshots(snapshots, settings.grouping, settings.workers, settings.params)
    if len(hot):
        backend.merge(gold["hot_keys"], hot, ["run_id", "splitter", "as_of_ms", "key"], app_id,
                      version)  # fmt: skip
    logger.info("gold refreshed for run %s from silver version %d", settings.run_id, version)
    return True
