"""Distribution metrics: balance, replication, queueing delay."""

from __future__ import annotations

from gold.metrics.balance import BalanceMetrics, balance_metrics
from gold.metrics.queueing import FifoQueueModel
from gold.metrics.summary import MetricRow, RunMetrics, RunMetricsAccumulator

__all__ = [
    "BalanceMetrics",
    "FifoQueueModel",
    "MetricRow",
    "RunMetrics",
    "RunMetricsAccumulator",
    "balance_metrics",
]
