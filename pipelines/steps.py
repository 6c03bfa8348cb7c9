"""A job's steps as log lines: where a run is, for an operator and for the crash harness.

Each step (a layer's streaming query, a data-quality gate, the gold refresh)
logs one line when it starts and one when it is done, in a fixed form that
:data:`STEP_LINE` reads back. A job killed between the two was inside the step;
``bench.crash_harness`` tells from these lines where its kills landed.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["STEP_LINE", "job_step"]

logger = logging.getLogger(__name__)

STEP_LINE = re.compile(r"^INFO pipelines\.steps: run (?P<run_id>\S+): "
                       r"(?P<step>[a-z][a-z ]*?) (?P<event>started|done)\b")  # fmt: skip
"""A step's line as the console shows it (``configure_logging``'s format)."""


@contextmanager
def job_step(run_id: str, step: str) -> Iterator[None]:
    """Log ``run <run_id>: <step> started``, run the block, then ``... <step> done in N s``.

    A step that fails logs no ``done`` line: the error is what the user reads.
    """
    started = time.monotonic()
    logger.info("run %s: %s started", run_id, step)
    yield
    logger.info("run %s: %s done in %.1f s", run_id, step, time.monotonic() - started)
