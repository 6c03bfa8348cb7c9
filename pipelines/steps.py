"""A job's steps as log lines: where a run is, for an operator and for the crash harness.

Each step (a layer's streaming query, a data-quality gate, the gold refresh)
logs one line when it starts and one when it is done, in a fixed form that
:data:`STEP_LINE` reads back (with ``dkg -v``: the ``started`` lines are
details). A job killed between the two was inside the step. A step's streaming
query also logs a line per micro-batch it committed (:func:`step_batch`, a
detail): how far into the step the job is. ``bench.crash_harness`` aims its
kills by these lines and tells from them where each landed.

A stage's ``done`` line is also its result line, shown without ``-v``: the
step's one duration, plus what the step watchers add (the progress display adds
the messages and the rate of the step's streaming query), so a stage is never
reported with two durations.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Protocol

from core.logs import RESULT

__all__ = ["STEP_LINE", "Step", "StepWatcher", "job_step", "step_batch", "watching_steps"]

logger = logging.getLogger(__name__)

STEP_LINE = re.compile(r"^INFO pipelines\.steps: run (?P<run_id>\S+): "
                       r"(?P<step>[a-z][a-z ]*?) "
                       r"(?P<event>started|done|batch (?P<batch>\d+) committed)\b")  # fmt: skip
"""A step's line as the console shows it with ``dkg -v`` (``configure_logging(details=True)``):
``event`` is ``started``, ``done`` or ``batch N committed`` (``batch`` is then N)."""


@dataclass
class Step:
    """One step of a run, as its watchers see it.

    Attributes:
        run_id: the run.
        name: the step (``silver``, ``gold``, ``bronze checks``, ``join``).
        total: messages its streaming query will have read at its end (absolute
            Kafka offsets, summed), when the job knows it up front; None otherwise.
        seconds: the step's duration, set when it ends: the one a stage is reported with.
    """

    run_id: str
    name: str
    total: int | None = None
    seconds: float | None = None


class StepWatcher(Protocol):
    """Told when each step starts and ends (called on the job's thread)."""

    def step_started(self, step: Step) -> None:
        """``step`` starts."""

    def step_done(self, step: Step, failed: bool) -> str:
        """``step`` ended (``step.seconds`` is set); figures to add to its done line, or ``""``."""


_watchers: list[StepWatcher] = []
_watchers_lock = threading.Lock()


@contextmanager
def watching_steps(watcher: StepWatcher) -> Iterator[None]:
    """Tell ``watcher`` about every step started in this process until the block ends."""
    with _watchers_lock:
        _watchers.append(watcher)
    try:
        yield
    finally:
        with _watchers_lock:
            _watchers.remove(watcher)


@contextmanager
def job_step(run_id: str, step: str, total: int | None = None,
             result_line: bool = True) -> Iterator[Step]:  # fmt: skip
    """Log ``run <run_id>: <step> started``, run the block, then ``... <step> done in N s``.

    A step that fails logs no ``done`` line: the error is what the user reads.

    Args:
        run_id: the run.
        step: the step's name.
        total: see :attr:`Step.total`.
        result_line: show the done line without ``-v``; False for steps whose
            outcome another line reports (the data-quality gates' verdict).
    """
    record = Step(run_id, step, total)
    with _watchers_lock:
        watchers = list(_watchers)
    started = time.monotonic()
    logger.info("run %s: %s started", run_id, step)
    for watcher in watchers:
        watcher.step_started(record)
    try:
        yield record
    except BaseException:
        record.seconds = time.monotonic() - started
        for watcher in watchers:
            watcher.step_done(record, failed=True)
        raise
    record.seconds = time.monotonic() - started
    added = [text for watcher in watchers if (text := watcher.step_done(record, failed=False))]
    logger.info("run %s: %s done in %.1f s%s", run_id, step, record.seconds,
                "".join(f": {text}" for text in added),
                extra=RESULT if result_line else None)  # fmt: skip


def step_batch(step: Step, batch_id: int) -> None:
    """Log ``run <run_id>: <step> batch <batch_id> committed`` (a detail).

    Called once Spark reported the micro-batch of the step's streaming query,
    which it does after the batch's commit: a job killed after this line resumes
    past that batch.
    """
    logger.info("run %s: %s batch %d committed", step.run_id, step.name, batch_id)
