"""Balance of a load vector: the formulas of design.md's metrics table."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["BalanceMetrics", "balance_metrics"]


@dataclass(frozen=True, slots=True)
class BalanceMetrics:
    """Balance of ``L_w`` (tuples per worker) over all W workers.

    Attributes:
        tuples: M = sum of L_w.
        stddev_pct: population std of 100 * L_w / M (seed 000's STD_DEV).
        imbalance: (max L_w - mean L_w) / M (PKG's lambda as a fraction).
        skew_s: (max L_w - U) / (M - U), U = ceil(M / W) (seed 002's S).
        e_lb: sum |L_w - mean L_w| / M (seed 003's E_LB, normalized).
    """

    tuples: int
    stddev_pct: float
    imbalance: float
    skew_s: float
    e_lb: float


def balance_metrics(loads: np.ndarray) -> BalanceMetrics:
    """Balance metrics of one scope; an empty scope (M = 0) scores 0 everywhere.

    ``skew_s`` is 0 when ``M == U`` (one worker, or at most one tuple): nothing
    could be spread better.
    """
    loads = np.asarray(loads, dtype=np.float64)
    total = float(loads.sum())
    if total <= 0:
        return BalanceMetrics(0, 0.0, 0.0, 0.0, 0.0)
    workers = len(loads)
    mean = total / workers
    peak = float(loads.max())
    ideal = math.ceil(total / workers)
    skew = (peak - ideal) / (total - ideal) if total > ideal else 0.0
    return BalanceMetrics(
        tuples=int(total),
        stddev_pct=float(np.std(100.0 * loads / total)),
        imbalance=(peak - mean) / total,
        skew_s=max(0.0, skew),
        e_lb=float(np.abs(loads - mean).sum() / total),
    )
