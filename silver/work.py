"""Physical mode: a worker that really spends its service time, so Spark's task times follow the routing.

With ``run.work=cpu`` each worker's Spark task burns ``process_ms`` of CPU per
tuple it serves, on its own thread, besides the queue model's bookkeeping. The
work is CPU time, not sleep: two workers sharing a core take twice as long, as
real per-tuple work would, so a hot worker's task is the micro-batch's critical
path and a balanced routing lets the cores share it.
"""

from __future__ import annotations

import time

import numpy as np

__all__ = ["spend_cpu"]

_STEP = np.arange(256, dtype=np.float64)


def spend_cpu(seconds: float) -> None:
    """Keep this thread's CPU busy for ``seconds`` of its own CPU time."""
    deadline = time.thread_time() + seconds
    sink = 0.0
    while time.thread_time() < deadline:
        sink += float(np.sqrt(_STEP).sum())  # a few microseconds of arithmetic per check
    if sink < 0:  # never true; keeps the arithmetic from being dead code
        raise AssertionError(sink)
