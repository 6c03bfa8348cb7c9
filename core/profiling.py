"""Wall-clock time per named phase of the driver's micro-batch work, for benchmarks.

The ``foreachBatch`` functions run on the driver, one micro-batch at a time, so
a process-wide tally is enough to split a query's ``addBatch`` time into
computing the batch (Spark work collected to the driver) and writing it (Delta).
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["phase_totals", "timed"]

_totals: defaultdict[str, float] = defaultdict(float)


@contextmanager
def timed(phase: str) -> Iterator[None]:
    """Add the time spent in the block to ``phase``."""
    started = time.perf_counter()
    try:
        yield
    finally:
        _totals[phase] += time.perf_counter() - started


def phase_totals() -> dict[str, float]:
    """Seconds per phase since the process started."""
    return dict(_totals)
