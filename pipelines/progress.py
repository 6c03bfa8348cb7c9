"""Progress on long work: a bar on a terminal, throttled INFO log lines otherwise.

On a terminal, a tqdm bar on stderr shows what is done, the rate and any extra
figures (e.g. the lag behind Kafka). When stderr is piped or redirected (CI,
``nohup``, a log file), a bar would spill control characters, so the same
figures go to the log at INFO (details: shown with ``dkg -v``), at most one line
per ``interval_s`` plus a last line when the work ends. The rate, on the bar and
in the log, is the units done since the work started over the seconds it has
been running, not a recent average.

Work whose figures arrive in rare lumps (a Spark micro-batch is reported only
when it ends) can start *waiting*: the bar then shows its label, the elapsed time
(redrawn every ``tick_s``) and a note, rather than a count of zero and no rate,
until the first ``update_to``.
"""

from __future__ import annotations

import json
import logging
import sys
import threading
import time
from collections.abc import Callable
from types import TracebackType
from typing import Any, TextIO

from tqdm import tqdm

__all__ = ["ProgressReporter", "offset_total"]

logger = logging.getLogger(__name__)


_WAITING = "{desc}: {elapsed}{postfix}"
"""The bar while nothing is counted yet: no count, no rate, only the time that passes."""


def _count(value: float) -> str:
    return f"{value:,.0f}"


class ProgressReporter:
    """Reports ``done`` out of ``total`` units, with a rate and extra figures."""

    def __init__(self, total: int | None, unit: str = "it", label: str = "",
                 interval_s: float = 2.0, stream: TextIO | None = None,
                 clock: Callable[[], float] = time.monotonic, waiting: str | None = None,
                 tick_s: float | None = None, end_line: bool = True) -> None:  # fmt: skip
        """Start reporting.

        Args:
            total: units expected, or None when unknown.
            unit: what is counted (``msg``, ``rows``, ...).
            label: what the work is; ``update_to`` may change it.
            interval_s: least seconds between two log lines (not on a terminal).
            stream: where the bar goes; stderr by default.
            clock: seconds, monotonic (injected by tests).
            waiting: start waiting, with this note, until the first ``update_to``.
            tick_s: on a terminal, redraw the bar this often (its elapsed time
                moves while no figure comes); None: only on updates.
            end_line: log the last figures at the end (off a terminal); False when
                the caller logs its own result line, so the end is not told twice.
        """
        stream = stream if stream is not None else sys.stderr
        self._tty = bool(getattr(stream, "isatty", lambda: False)())
        # smoothing=0: the rate since the start, the same figure the log lines give. While
        # waiting the bar has no total: tqdm ignores bar_format for a bar with a total on a
        # terminal of unknown width.
        self._bar = tqdm(total=total if waiting is None else None, desc=label, unit=unit,
                         unit_scale=True, file=stream, smoothing=0, disable=not self._tty,
                         leave=False, dynamic_ncols=True,
                         bar_format=None if waiting is None else _WAITING)  # fmt: skip
        # Figures that come in rare lumps are each drawn at once, not after tqdm's least
        # interval between two redraws.
        self.waiting = self._lumpy = waiting is not None
        if waiting:
            self._bar.set_postfix_str(waiting)
        self.total, self.unit, self.label = total, unit, label
        self.done, self.extra = 0, ""
        self._first = 0  # units done before this work began (a resumed query's offsets)
        self._interval, self._clock = interval_s, clock
        self._started = clock()
        self._logged_at: float | None = None
        self._logged_done = -1
        self._end_line = end_line
        self._closed = threading.Event()
        if self._tty and tick_s:
            threading.Thread(target=self._tick, args=(tick_s,), daemon=True,
                             name=f"progress {label}").start()  # fmt: skip

    def _tick(self, every_s: float) -> None:
        while not self._closed.wait(every_s):
            self._bar.refresh()

    def begin_at(self, done: int) -> None:
        """Count from ``done``: units done before this work began, not by it.

        A query resumed from a checkpoint starts at its stored offsets; the rate
        counts only what it processes itself.
        """
        self.done = self._first = done
        self._bar.n = self._bar.last_print_n = self._bar.initial = done

    def elapsed(self) -> float:
        """Seconds since the work started."""
        return self._clock() - self._started

    def rate(self) -> float:
        """Units per second: the units done since the start over the seconds since the start."""
        elapsed = self.elapsed()
        return (self.done - self._first) / elapsed if elapsed > 0 else 0.0

    @property
    def processed(self) -> int:
        """Units done by this work (not those done before it began, see :meth:`begin_at`)."""
        return self.done - self._first

    def update_to(self, done: int, label: str | None = None, total: int | None = None,
                  unit: str | None = None, log: bool = True,
                  **extra: int | float | str) -> None:  # fmt: skip
        """Move to ``done`` units; the end of waiting.

        Args:
            done: units done so far.
            label: a new label, or None to keep the current one.
            total: a new total (it may grow while the work runs), or None.
            unit: a new unit (once known what is counted), or None.
            log: False: no log line for these figures, which the caller reports itself.
            **extra: more figures to show, e.g. ``lag=1200``.
        """
        self.done, self.label = done, self.label if label is None else label
        if total is not None:
            self.total = total
        if unit is not None:
            self.unit = self._bar.unit = unit
        if self.waiting:
            self.waiting, self._bar.bar_format = False, None
            self._bar.set_postfix_str("", refresh=False)
        self._bar.total = self.total
        self.extra = ", ".join(f"{k} {_count(v) if isinstance(v, int | float) else v}"
                               for k, v in extra.items())  # fmt: skip
        if self._tty:
            self._bar.set_description_str(self.label, refresh=False)
            if self.extra:
                self._bar.set_postfix_str(self.extra, refresh=False)
            self._bar.update(done - self._bar.n)
            if self._lumpy:
                self._bar.refresh()
            return
        # Work shorter than one interval logs nothing: it needs no progress report.
        since = self._started if self._logged_at is None else self._logged_at
        if log and self._clock() - since >= self._interval:
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
        self._closed.set()
        self._bar.close()
        logged_before = self._logged_at is not None and self._end_line
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
