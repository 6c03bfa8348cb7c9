"""Progress on long work: a bar on a terminal, throttled INFO log lines otherwise.

On a terminal, a tqdm bar on stderr shows what is done, the rate and any extra
figures (e.g. the lag behind Kafka). When stderr is piped or redirected (CI,
``nohup``, a log file), a bar would spill control characters, so the same
figures go to the log at INFO, at most one line per ``interval_s`` plus a last
line when the work ends. The logged rate is the units done since the work
started over the seconds it has been running.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from collections.abc import Callable
from types import TracebackType
from typing import Any, TextIO

from tqdm import tqdm

__all__ = ["ProgressReporter", "offset_total"]

logger = logging.getLogger(__name__)


def _count(value: float) -> str:
    return f"{value:,.0f}"


class ProgressReporter:
    """Reports ``done`` out of ``total`` units, with a rate and extra figures."""

    def __init__(self, total: int | None, unit: str = "it", label: str = "",
                 interval_s: float = 2.0, stream: TextIO | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:  # fmt: skip
        """Start reporting.

        Args:
            total: units expected, or None when unknown.
            unit: what is counted (``msg``, ``rows``, ...).
            label: what the work is; ``update_to`` may change it.
            interval_s: least seconds between two log lines (not on a terminal).
            stream: where the bar goes; stderr by default.
            clock: seconds, monotonic (injected by tests).
        """
        stream = stream if stream is not None else sys.stderr
        self._tty = bool(getattr(stream, "isatty", lambda: False)())
        self._bar = tqdm(total=total, unit=unit, unit_scale=True, file=stream,
                         disable=not self._tty, leave=False, dynamic_ncols=True)  # fmt: skip
        self.total, self.unit, self.label = total, unit, label
        self.done, self.extra = 0, ""
        self._first = 0  # units done before this work began (a resumed query's offsets)
        self._interval, self._clock = interval_s, clock
        self._started = clock()
        self._logged_at: float | None = None
        self._logged_done = -1

    def begin_at(self, done: int) -> None:
        """Count from ``done``: units done before this work began, not by it.

        A query resumed from a checkpoint starts at its stored offsets; the rate
        counts only what it processes itself.
        """
        self.done = self._first = done
        self._bar.n = self._bar.last_print_n = self._bar.initial = done

    def rate(self) -> float:
        """Units per second: the units done since the start over the seconds since the start."""
        elapsed = self._clock() - self._started
        return (self.done - self._first) / elapsed if elapsed > 0 else 0.0

    def update_to(self, done: int, label: str | None = None, total: int | None = None,
                  **extra: int | float | str) -> None:  # fmt: skip
        """Move to ``done`` units.

        Args:
            done: units done so far.
            label: a new label, or None to keep the current one.
            total: a new total (it may grow while the work runs), or None.
            **extra: more figures to show, e.g. ``lag=1200``.
        """
        self.done, self.label = done, self.label if label is None else label
        if total is not None:
            self.total = self._bar.total = total
        self.extra = ", ".join(f"{k} {_count(v) if isinstance(v, int | float) else v}"
                               for k, v in extra.items())  # fmt: skip
        if self._tty:
            self._bar.set_description_str(self.label, refresh=False)
            if self.extra:
                self._bar.set_postfix_str(self.extra, refresh=False)
            self._bar.update(done - self._bar.n)
            return
        # Work shorter than one interval logs nothing: it needs no progress report.
        since = self._started if self._logged_at is None else self._logged_at
        if self._clock() - since >= self._interval:
            self._log()

    def _log(self) -> None:
        of = f"/{_count(self.total)}" if self.total else ""
        extra = f", {self.extra}" if self.extra else ""
        logger.info("%s: %s%s %s, %s %s/s%s", self.label or "progress", _count(self.done), of,
                    self.unit, _count(self.rate()), self.unit, extra)  # fmt: skip
        self._logged_at, self._logged_done = self._clock(), self.done

    def close(self, failed: bool = False) -> None:
        """End the bar; off a terminal, log the final figures after earlier lines.

        Args:
            failed: the work ended with an error; its message is what matters then.
        """
        self._bar.close()
        logged_before = self._logged_at is not None
        if not self._tty and not failed and logged_before and self._logged_done != self.done:
            self._log()

    def __enter__(self) -> ProgressReporter:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close(failed=exc_type is not None)


def offset_total(offset: Any) -> int | None:
    """Sum of the per-partition offsets in a Kafka source offset (JSON text or parsed).

    Handles the project's Kafka source (``{"0": 120, "1": 118}``) and Spark's
    own (``{"topic": {"0": 120}}``); None when there is no offset, or when it is
    not a Kafka offset (a Delta source's ``{"version": 4}``).
    """
    if isinstance(offset, str):
        try:
            offset = json.loads(offset)
        except ValueError:
            return None
    if not isinstance(offset, dict) or not offset:
        return None
    if all(isinstance(v, dict) for v in offset.values()):  # per topic
        parts = [offset_total(v) for v in offset.values()]
        return None if None in parts else sum(p for p in parts if p is not None)
    if all(k.isdigit() and isinstance(v, int) and not isinstance(v, bool)
           for k, v in offset.items()):  # fmt: skip
        return sum(offset.values())
    return None
