"""Progress of streaming queries: one ``StreamingQueryListener``, one live display per stage.

Spark reports each micro-batch on the driver (``batchId``, ``numInputRows``,
the source's offsets) and only when the batch *ends*: while a batch runs
nothing is known of how far it is. A finite run that drains its input in one
micro-batch has exactly one report, at its very end. So a stage (a step of
:func:`pipelines.steps.job_step`) is shown in two forms, on a terminal:

* until its first micro-batch ends, its name, the elapsed time (redrawn every
  second) and, when the job knows it up front (the Kafka end offsets at start,
  ``Step.total``), how many messages it is to read. No count and no rate: a bar
  at 0 % until it jumps to 100 % would state a rate of zero the whole time;
* from its first micro-batch on, a bar of messages done out of the input's
  true total, with the rate: the messages this query processed over the seconds
  since the step started.

The bar goes away when the step ends; the step's ``done`` line, the stage's one
result line, gets the count and the rate over the step's own duration from
:meth:`StreamProgressListener.step_done`. Off a terminal there is no bar:
the figures go to the log at INFO (``dkg -v``) and the ``done`` line stays. A query
started outside any step (a continuous run's) is shown from its start to its
end and gets its own result line then.

For a query that reads Kafka the figures are messages (the sources' offsets,
summed over the sources; the join reads two topics) and the lag is shown:
messages in the topic (the source's ``latestOffset``, else the broker's end
offsets) minus the messages the query has processed. Spark's
``processedRowsPerSecond`` is not used: it covers one micro-batch and counts
the rows of the source, and silver's source packs many records into one row.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TextIO

from pyspark.sql.streaming.listener import (
    QueryIdleEvent,
    QueryProgressEvent,
    QueryStartedEvent,
    QueryTerminatedEvent,
    StreamingQueryListener,
)

from core.logs import RESULT
from core.spark.input_rows import input_rows
from pipelines.progress import ProgressReporter, offset_total
from pipelines.steps import Step, step_batch, watching_steps

__all__ = ["StreamProgressListener", "stage_progress"]

logger = logging.getLogger(__name__)


@dataclass
class _Stage:
    """One live display: a step's, or a query's started outside any step."""

    reporter: ProgressReporter
    step: Step | None
    queries: int = 0  # queries started in it
    running: int = 0  # of which not ended yet
    rows: int = 0
    begun: bool = False


def _kafka_offsets(sources: Any) -> tuple[int, int, int | None] | None:
    """Start, end and latest offsets summed over the sources; None unless all are Kafka's."""
    if not sources:
        return None
    ends = [offset_total(source.endOffset) for source in sources]
    if None in ends:
        return None
    starts = [offset_total(source.startOffset) or 0 for source in sources]
    latest = [offset_total(source.latestOffset) for source in sources]
    return (sum(starts), sum(e or 0 for e in ends),
            None if None in latest else sum(x or 0 for x in latest))  # fmt: skip


class StreamProgressListener(StreamingQueryListener):
    """Feeds a progress display per stage; Spark calls it on the driver (py4j callback thread).

    Also a :class:`~pipelines.steps.StepWatcher` (see :func:`stage_progress`): a
    step's display starts with the step, before its query, and ends with it.
    """

    def __init__(self, kafka_end: Callable[[], int] | None = None,
                 lag_queries: Collection[str] = ("bronze", "silver"), interval_s: float = 2.0,
                 end_every_s: float = 5.0, clock: Callable[[], float] = time.monotonic,
                 stream: TextIO | None = None, end_wait_s: float = 5.0) -> None:  # fmt: skip
        """Build the listener; register it with ``spark.streams.addListener``.

        Args:
            kafka_end: messages in the topic now (sum of end offsets); used for the
                lag when the source does not report ``latestOffset``.
            lag_queries: names of the queries that may read ``kafka_end``'s topic
                (bronze's, or silver's when its tasks land bronze); their figures are
                messages even when their source packs them into rows.
            interval_s: least seconds between two log lines per query (off a terminal).
            end_every_s: least seconds between two ``kafka_end`` calls.
            clock: seconds, monotonic (injected by tests).
            stream: where the bars go; stderr by default.
            end_wait_s: most seconds a step's end waits for its query's last
                events (Spark delivers them a little after the query returns).
        """
        super().__init__()
        self._kafka_end, self._lag_queries = kafka_end, set(lag_queries)
        self._interval, self._end_every, self._clock = interval_s, end_every_s, clock
        self._stream, self._end_wait = stream, end_wait_s
        self._stages: dict[str, _Stage] = {}
        self._queries: dict[str, str] = {}  # query id -> stage name
        self._end: tuple[float, int] | None = None
        self._idle = threading.Condition()
        self.last: dict[str, dict[str, Any]] = {}
        """Last figures per query name (batch, rows, done, rate, lag), for callers and tests."""
        self.finished: list[str] = []
        """Names of the queries that ended, in order."""

    def _reporter(self, name: str, total: int | None, waiting: str | None) -> ProgressReporter:
        unit = "msg" if total is not None or name in self._lag_queries else "rows"
        return ProgressReporter(total, unit=unit, label=name, interval_s=self._interval,
                                stream=self._stream, clock=self._clock, waiting=waiting,
                                tick_s=1.0, end_line=False)  # fmt: skip

    def step_started(self, step: Step) -> None:
        """A display for the step, waiting until its query reports a micro-batch."""
        note = "" if step.total is None else f"{step.total:,} msg to read"
        with self._idle:
            self._stages[step.name] = _Stage(self._reporter(step.name, step.total, note), step)

    def step_done(self, step: Step, failed: bool) -> str:
        """End the step's display; its query's count and rate over ``step.seconds``."""
        with self._idle:
            stage = self._stages.get(step.name)
            if stage is None or stage.step is not step:
                return ""
            self._idle.wait_for(lambda: stage.running <= 0, 0 if failed else self._end_wait)
            del self._stages[step.name]
        stage.reporter.close(failed=failed)
        if failed or not stage.queries:
            return ""
        return _result(stage.reporter, step.seconds or 0.0)

    def onQueryStarted(self, event: QueryStartedEvent) -> None:
        """Attach the query to its step's display, or give it one (continuous runs)."""
        name = event.name or str(event.id)
        with self._idle:
            stage = self._stages.get(name)
            if stage is None:
                stage = self._stages[name] = _Stage(self._reporter(name, None, ""), None)
            stage.queries += 1
            stage.running += 1
            self._queries[str(event.id)] = name

    def onQueryProgress(self, event: QueryProgressEvent) -> None:
        """Report one micro-batch."""
        try:
            self._report(event.progress)
        except Exception:  # progress must never fail the job
            logger.debug("progress report failed", exc_info=True)

    def onQueryIdle(self, event: QueryIdleEvent) -> None:
        """Nothing to report."""

    def onQueryTerminated(self, event: QueryTerminatedEvent) -> None:
        """The query's end; a query outside any step gets its result line now."""
        failed = event.exception is not None
        with self._idle:
            name = self._queries.pop(str(event.id), str(event.id))
            self.finished.append(name)
            stage = self._stages.get(name)
            if stage is not None:
                stage.running -= 1
            alone = stage is not None and stage.step is None and stage.running <= 0
            if alone:
                del self._stages[name]
            self._idle.notify_all()
        if alone and stage is not None:
            seconds = stage.reporter.elapsed()
            stage.reporter.close(failed=failed)
            if not failed:
                logger.info("%s done in %.1f s: %s", name, seconds, _result(stage.reporter, seconds),
                            extra=RESULT)  # fmt: skip

    def _report(self, progress: Any) -> None:
        name = progress.name or str(progress.id)
        with self._idle:
            stage = self._stages.get(name)
        if stage is None:
            return
        if stage.step is not None:  # a detail line per committed micro-batch (the crash harness's)
            step_batch(stage.step, int(progress.batchId))
        reporter = stage.reporter
        stage.rows += input_rows(progress)
        figures: dict[str, Any] = {"batch": int(progress.batchId)}
        done, total, unit = stage.rows, None, reporter.unit
        offsets = _kafka_offsets(progress.sources)
        if offsets is not None:
            start, done, latest = offsets
            unit = "msg"
            if not stage.begun:  # its first batch starts where the checkpoint left off
                stage.begun = True
                reporter.begin_at(start)
            end = latest if latest is not None else self._topic_end(name)
            if end is not None:
                figures["lag"] = max(0, end - done)
            # A finite run's total is what the job planned to read; a continuous one's grows.
            known = stage.step.total if stage.step is not None else None
            upto = known if known is not None else end
            total = None if upto is None else max(upto, done)
        # The batch that reaches a step's known total is told by the step's done line.
        last = stage.step is not None and stage.step.total is not None and done >= stage.step.total
        reporter.update_to(done, total=total, unit=unit, log=not last, **figures)
        self.last[name] = {**figures, "rows": stage.rows, "done": done, "rate": reporter.rate()}

    def _topic_end(self, name: str) -> int | None:
        if self._kafka_end is None or name not in self._lag_queries:
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
                lambda: not self._queries and (until is None or until in self.finished),
                timeout_s)  # fmt: skip


def _result(reporter: ProgressReporter, seconds: float) -> str:
    """``20,000 msg, 2,062 msg/s``: what the query processed, over ``seconds``."""
    unit, processed = reporter.unit, reporter.processed
    rate = processed / seconds if seconds > 0 else 0.0
    short = (reporter.total or 0) - reporter.done
    left = f", {short:,} {unit} left" if short > 0 else ""
    return f"{processed:,} {unit}, {rate:,.0f} {unit}/s{left}"


@contextmanager
def stage_progress(spark: Any, kafka_end: Callable[[], int] | None = None,
                   lag_queries: Collection[str] = ("bronze", "silver")
                   ) -> Iterator[StreamProgressListener]:  # fmt: skip
    """One listener showing every step and streaming query of the block, then removed."""
    listener = StreamProgressListener(kafka_end=kafka_end, lag_queries=lag_queries)
    spark.streams.addListener(listener)
    try:
        with watching_steps(listener):
            yield listener
    finally:
        listener.wait_idle()
        spark.streams.removeListener(listener)
