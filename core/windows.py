"""Tumbling event-time windows: the one definition of a window's start and end.

A window of ``width_ms`` is ``[start, start + width_ms)``, ``start`` a multiple
of ``width_ms`` counted from event time 0 (the epoch). Every window of the
pipeline is one: silver's worker windows, gold's aggregation windows (a whole
number of worker windows each, so a worker window's start falls in the
aggregation window that holds it) and the join's statistics windows. Spark's
``window()`` without an offset and quix-streams' tumbling windows line up the
same way.

Pure arithmetic on a Python int, or on a numpy or pandas array of them (element
by element, same kind out): callable on the driver and in Spark's tasks alike.
Floor division puts a time before the epoch in the window that starts before it.
"""

from __future__ import annotations

from typing import TypeVar

import numpy as np
import pandas as pd

__all__ = ["window_end", "window_start"]

_Times = TypeVar("_Times", int, np.ndarray, pd.Series)


def _width(width_ms: int) -> int:
    if width_ms <= 0:
        raise ValueError(f"a window's width must be positive, not {width_ms} ms")
    return width_ms


def window_start(event_time_ms: _Times, width_ms: int) -> _Times:
    """The start of the window of ``width_ms`` holding ``event_time_ms``: ``floor(t / w) * w``.

    Args:
        event_time_ms: event time(s), ms since the epoch.
        width_ms: the window's width, ms (> 0).
    """
    width = _width(width_ms)
    return event_time_ms // width * width


def window_end(start_ms: _Times, width_ms: int) -> _Times:
    """The end (exclusive) of the window of ``width_ms`` that starts at ``start_ms``."""
    return start_ms + _width(width_ms)
