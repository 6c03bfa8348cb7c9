"""Which grouping balance served best, and how a latency reads: one rule for every reader.

``dkg run``, ``dkg simulate``, ``dkg advise`` and the report's paragraph all name
the run with the most capacity; capacities within :data:`CAPACITY_TIE` of the
highest are a tie (a perfect balance is a perfect balance), won by the lower
``dist_cost``: the same balance for less merge work.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

__all__ = ["CAPACITY_TIE", "best_by_capacity", "latency_text"]

CAPACITY_TIE = 0.02
"""Capacities within this fraction of the highest tie; the lower dist_cost wins."""

T = TypeVar("T")


def best_by_capacity(runs: Sequence[T], capacity: Callable[[T], float | None],
                     dist_cost: Callable[[T], float | None]) -> T | None:  # fmt: skip
    """The run with the most capacity, ties to the least merge work; None if none has a capacity."""
    rated = [r for r in runs if capacity(r) is not None]
    if not rated:
        return None
    top = max(capacity(r) or 0.0 for r in rated)
    near = [r for r in rated if (capacity(r) or 0.0) >= top * (1 - CAPACITY_TIE)]
    return min(near, key=lambda r: float("inf") if dist_cost(r) is None else dist_cost(r))  # type: ignore[return-value]


def latency_text(ms: float | None) -> str:
    """A latency with its unit and three significant digits: ``1.38 ms``, ``844 ms``, ``24.5 s``."""
    if ms is None:
        return "-"
    value, unit = (ms, "ms") if ms < 1000 else (ms / 1000, "s") if ms < 60_000 else (ms / 60_000, "min")
    decimals = 2 if value < 10 else 1 if value < 100 else 0
    return f"{value:,.{decimals}f} {unit}"
