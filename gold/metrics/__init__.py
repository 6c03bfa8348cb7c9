"""Distribution metrics: balance, replication, queueing delay."""

from __future__ import annotations

from gold.metrics.balance import BalanceMetrics, balance_metrics
from gold.metrics.summary import MetricRow, RunMetrics, RunMetricsAccumulator
from silver.queueing import FifoQueueModel

__all__ = [
    "BalanceMetrics",
    "FifoQueueModel",
    "MetricRow",
    "RunMetrics",
    "RunMetricsAccumulator",
    "balance_metrics",
]
