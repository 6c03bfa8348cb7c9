"""Progress of streaming queries: one ``StreamingQueryListener`` for the whole job.

Spark reports each micro-batch on the driver (``batchId``, ``numInputRows``,
the source's offsets); this listener turns those reports into one
:class:`~pipelines.progress.ProgressReporter` per query. For a query that reads
Kafka (``bronze``) it also shows the lag: messages in the topic (the source's
``latestOffset``, else the broker's end offsets) minus the messages the query
has processed (the batch's ``endOffset``).

The rate shown is the query's records since it started over the seconds since
it started. Spark's ``processedRowsPerSecond`` is not used: it covers one
micro-batch and counts the rows of the source, and silver's source packs many
records into one row.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Collection
from typing import Any

from pyspark.sql.streaming.listener import (
    QueryIdleEvent,
    QueryProgressEvent,
    QueryStartedEvent,
    QueryTerminatedEvent,
    StreamingQueryListener,
)

from core.spark.input_rows import input_rows
from pipelines.progress import ProgressReporter, offset_total

__all__ = ["StreamProgressListener"]

logger = logging.getLogger(__name__)


class StreamProgressListener(StreamingQueryListener):
    """Feeds a progress reporter per query; runs on the driver (py4j callback thread)."""

    def __init__(self, kafka_end: Callable[[], int] | None = None,
                 lag_queries: Collection[str] = ("bronze", "silver"), interval_s: float = 2.0,
                 end_every_s: float = 5.0,
                 clock: Callable[[], float] = time.monotonic) -> None:  # fmt: skip
        """Build the listener; register it with ``spark.streams.addListener``.

        Args:
            kafka_end: messages in the topic now (sum of end offsets); used for the
                lag when the source does not report ``latestOffset``.
            lag_queries: names of the queries that may read Kafka (bronze's, or
                silver's when its tasks land bronze); a lag is shown when their
                source's offsets are Kafka's.
            interval_s: least seconds between two log lines per query (off a terminal).
            end_every_s: least seconds between two ``kafka_end`` calls.
            clock: seconds, monotonic (injected by tests).
        """
        super().__init__()
        self._kafka_end, self._lag_queries = kafka_end, set(lag_queries)
        self._interval, self._end_every, self._clock = interval_s, end_every_s, clock
        self._reporters: dict[str, ProgressReporter] = {}
        self._rows: dict[str, int] = {}
        self._begun: set[str] = set()
        self._end: tuple[float, int] | None = None
        self._idle = threading.Condition()
        self._names: dict[str, str] = {}
        self.last: dict[str, dict[str, Any]] = {}
        """Last figures per query name (batch, rows, rate, lag), for callers and tests."""
        self.finished: list[str] = []
        """Names of the queries that ended, in order."""

    def onQueryStarted(self, event: QueryStartedEvent) -> None:
        """A reporter for the new query."""
        name = event.name or str(event.id)
        with self._idle:
            self._reporters[str(event.id)] = ProgressReporter(
                None, unit="msg" if name in self._lag_queries else "rows", label=name,
                interval_s=self._interval, clock=self._clock)  # fmt: skip
            self._rows[str(event.id)] = 0
            self._names[str(event.id)] = name

    def onQueryProgress(self, event: QueryProgressEvent) -> None:
        """Report one micro-batch."""
        try:
            self._report(event.progress)
        except Exception:  # progress must never fail the job
            logger.debug("progress report failed", exc_info=True)

    def onQueryIdle(self, event: QueryIdleEvent) -> None:
        """Nothing to report."""

    def onQueryTerminated(self, event: QueryTerminatedEvent) -> None:
        """Final figures of the query."""
        with self._idle:
            reporter = self._reporters.pop(str(event.id), None)
            self.finished.append(self._names.get(str(event.id), str(event.id)))
            self._idle.notify_all()
        if reporter is not None:
            reporter.close(failed=event.exception is not None)

    def _report(self, progress: Any) -> None:
        key, name = str(progress.id), progress.name or str(progress.id)
        reporter = self._reporters.get(key)
        if reporter is None:
            return
        self._rows[key] = rows = self._rows.get(key, 0) + input_rows(progress)
        figures: dict[str, Any] = {"batch": int(progress.batchId)}
        done, total = rows, None
        source = progress.sources[0] if progress.sources else None
        if name in self._lag_queries and source is not None and offset_total(source.endOffset) is not None:
            if key not in self._begun:  # its first batch starts where the checkpoint left off
                self._begun.add(key)
                reporter.begin_at(offset_total(source.startOffset) or 0)
            done = offset_total(source.endOffset) or 0
            end = offset_total(source.latestOffset)
            end = end if end is not None else self._topic_end()
            if end is not None:
                total = max(end, done)
                figures["lag"] = max(0, end - done)
        reporter.update_to(done, total=total, **figures)
        self.last[name] = {**figures, "rows": rows, "done": done, "rate": reporter.rate()}

    def _topic_end(self) -> int | None:
        if self._kafka_end is None:
            return None
        now = self._clock()
        if self._end is None or now - self._end[0] >= self._end_every:
            self._end = (now, int(self._kafka_end()))
        return self._end[1]

    def wait_idle(self, timeout_s: float = 5.0, until: str | None = None) -> bool:
        """Wait until every started query has reported its end (events arrive late).

        Args:
            timeout_s: most seconds to wait.
            until: also wait for the end of the query of this name.
        """
        with self._idle:
            return self._idle.wait_for(
                lambda: not self._reporters and (until is None or until in self.finished),
                timeout_s)  # fmt: skip
