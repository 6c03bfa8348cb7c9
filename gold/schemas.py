"""Gold's table conventions: the cumulative row's window start."""

from __future__ import annotations

__all__ = ["CUMULATIVE_WINDOW_START_MS"]

CUMULATIVE_WINDOW_START_MS = -1
"""``window_start_ms`` of a whole-run (``scope = 'cumulative'``) row of ``gold.distribution_metrics``
and ``gold.join_stats``, and of :class:`gold.metrics.MetricRow`.

A real value, not null: ``distribution_metrics`` is partitioned by
``(run_id, window_start_ms)`` and each refresh replaces the partitions it rebuilt,
named by value (``window_start_ms IN (...)``, which no null matches), and
``join_stats`` is merged on ``(run_id, scope, window_start_ms)`` with ``=``, under
which a null never equals itself, so a second refresh would add the row again.
No window of an event time since the epoch starts there (:mod:`core.windows`: its
start is at most the time, at least 0); ``scope`` is what tells the rows apart.
"""
