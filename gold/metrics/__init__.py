"""Distribution metrics: balance, replication, queueing delay and capacity (one engine)."""

from __future__ import annotations

from gold.metrics.balance import BalanceMetrics, balance_metrics
from gold.metrics.served import ServedTuples
from gold.metrics.summary import MetricRow, RunMetrics

__all__ = [
    "BalanceMetrics",
    "MetricRow",
    "RunMetrics",
    "ServedTuples",
    "balance_metrics",
]
