"""A run's plan: every decision about one run, made once from the settings and passed down.

The command line resolves the settings (:mod:`core.config`) and the run's
identity into one frozen :class:`RunPlan` per grouping; every layer reads what
it needs from it and nothing repacks it. The ``run.*`` settings travel as the
loaded :class:`core.config.RunConfig`, so their defaults have one definition;
the plan adds what follows from them and the source: the queue model's
arrival speed-up, which a load turns into a speed only once the stream's tuple
rate is known.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from core.config import RunConfig

__all__ = ["RunPlan", "query_id"]


@dataclass(frozen=True)
class RunPlan:
    """One run: a source through one grouping.

    Attributes:
        run_id: the run's id (its checkpoints, its rows in every table).
        source_type: how the messages are parsed (a dataset or a format's source type).
        grouping: the grouping's name, as in the seed.
        splitters: routing instances.
        run: the ``run.*`` settings (workers, windows, queue model, batch sizes, triggers).
        params: the grouping's parameters.
        speed: the queue model's event-time speed-up (``run.speed``, or what makes ``run.load``).
        load: the workers' mean utilisation at that speed; None when the stream's tuple
            rate is unknown (a live topic at its own pace).
        label: the run's name in tables and reports (the grouping with its parameters).
        source: what ``gold.runs`` records as the source (dataset or format name).
        topic: the Kafka topic it reads.
        messages: the messages it covers, when known.
        attempt: how many times the run was recomputed (``dkg run --recompute``): its
            writers' ids carry it, so a recomputed run is not taken for one already written.
    """

    run_id: str
    source_type: str
    grouping: str
    splitters: int
    run: RunConfig = field(default_factory=RunConfig)
    params: Mapping[str, Any] = field(default_factory=dict)
    speed: float = 1.0
    load: float | None = None
    label: str = ""
    source: str = ""
    topic: str = ""
    messages: int | None = None
    attempt: int = 0

    @property
    def workers(self) -> int:
        """W (``run.workers``): what every layer sizes itself by."""
        return self.run.workers

    def query_id(self, query: str) -> str:
        """This attempt's writer ``query`` (see :func:`query_id`)."""
        return query_id(self.run_id, query, self.attempt)


def query_id(run_id: str, query: str, attempt: int = 0) -> str:
    """A run's writer by name (``bronze``, ``silver``, ``gold``, ``join``): its Delta application
    id, under which every table it writes records its micro-batches, and its checkpoint's name.
    A recomputed run's writers (``attempt`` > 0) are new writers."""
    return f"{run_id}-{query}" if attempt == 0 else f"{run_id}-{query}-attempt{attempt}"
