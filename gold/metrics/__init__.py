"""Distribution metrics: balance, replication, queueing delay (from the workers' queues)."""

from __future__ import annotations

from gold.metrics.balance import BalanceMetrics, balance_metrics
from gold.metrics.summary import MetricRow, RunMetrics, RunMetricsAccumulator

__all__ = [
    "BalanceMetrics",
    "MetricRow",
    "RunMetrics",
    "RunMetricsAccumulator",
    "balance_metrics",
]
