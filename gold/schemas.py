"""Gold's tables (layer, name), each named here only, and the cumulative row's window start."""

from __future__ import annotations

__all__ = [
    "CUMULATIVE_WINDOW_START_MS",
    "DISTRIBUTION_METRICS",
    "HOT_KEYS",
    "JOIN_STATS",
    "KEY_COUNTS",
    "RUNS",
    "WORKER_BUSY",
    "WORKER_LOAD",
]

KEY_COUNTS = ("gold", "key_counts")
"""The workers' partials merged per window and key (the AggregatorBolt)."""
WORKER_LOAD = ("gold", "worker_load")
"""Tuples and keys per worker per window."""
DISTRIBUTION_METRICS = ("gold", "distribution_metrics")
"""Balance, cost, latency and capacity per window and for the whole run."""
HOT_KEYS = ("gold", "hot_keys")
"""Keys spread over more than their initial workers, and why."""
WORKER_BUSY = ("gold", "worker_busy")
"""Each worker's measured busy time per micro-batch (physical mode only)."""
RUNS = ("gold", "runs")
"""One row per run: source, grouping, workers, parameters, status."""
JOIN_STATS = ("gold", "join_stats")
"""The join's match rate, latency, late and unmatched counts per window and for the whole run."""

CUMULATIVE_WINDOW_START_MS = -1
"""``window_start_ms`` of a whole-run row (``scope = 'cumulative'``) of
``gold.distribution_metrics`` and ``gold.join_stats``, and of :class:`gold.metrics.MetricRow`.

A real value, not null: ``distribution_metrics`` is partitioned by
``(run_id, window_start_ms)`` and each refresh replaces the partitions it rebuilt,
named by value (``window_start_ms IN (...)``, which no null matches), and
``join_stats`` is merged on ``(run_id, scope, window_start_ms)`` with ``=``, under
which a null never equals itself, so a second refresh would add the row again.
No window of an event time since the epoch starts there (:mod:`core.windows`: its
start is at most the time, at least 0); ``scope`` is what tells the rows apart.
"""
