"""Where the crash harness aims its kills: points of a job's progress, and a seeded plan of them.

A job goes through its runs in order (one per grouping; the join's one), each
through the same steps in order (:mod:`pipelines.steps`); a step with a
streaming query commits micro-batches. Its progress is a :class:`Point`: run,
step, and how many of the step's micro-batches (those of a run never killed) are
committed. Its step lines move the point forward (a step's start: as many as
earlier lives committed; each committed micro-batch: up to it; its end: past the
step), so within a life it only grows.

A kill is aimed at a point plus a delay: a seeded fraction of how long the unit
of work that starts there last took (the next micro-batch, or the whole step).
Two kills aimed at one micro-batch hit it twice: the second one as the resumed
job replays it. A job that reaches the point already past it (a kill before
landed later than it was aimed) is killed that delay after the first line at or
past it.
"""

from __future__ import annotations

import random
from bisect import bisect_right
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from bench.crash_kill import StepEvent
from pipelines.medallion import gated_steps

__all__ = [
    "PAST",
    "Layout",
    "Point",
    "Progress",
    "Target",
    "UnitSeconds",
    "plan_kills",
    "points",
]

PAST = 1_000_000
"""Micro-batches of a step that is done: past every unit of work in it."""


@dataclass(frozen=True, order=True)
class Point:
    """A job's progress: its ``run``-th run, that run's ``step``-th step, and the
    micro-batches the step committed in this life (:data:`PAST` once it is done)."""

    run: int
    step: int
    batches: int


@dataclass(frozen=True)
class Layout:
    """A job's runs in order, the steps of each, and the micro-batches of each streaming step.

    Attributes:
        runs: run ids in the order the job runs them.
        labels: a short name per run id (its grouping).
        steps: each run's steps in order (a step may come twice: the join's phases).
        batches: the ids of the micro-batches per ``(run id, step index)`` of a streaming
            step, in a run to its end.
    """

    runs: tuple[str, ...]
    labels: Mapping[str, str]
    steps: tuple[str, ...]
    batches: Mapping[tuple[str, int], tuple[int, ...]]

    @classmethod
    def of(cls, events: Sequence[StepEvent], gates: bool = False,
           labels: Mapping[str, str] | None = None) -> Layout:  # fmt: skip
        """The layout of a job that ran to its end with these ``events`` (one life), as a job
        with data-quality gates runs it if ``gates`` (the events' job ran none).

        Raises:
            ValueError: its runs did not go through the same steps.
        """
        runs = tuple(dict.fromkeys(event.run_id for event in events))
        ran = {run: tuple(e.step for e in events if e.run_id == run and e.event == "started")
               for run in runs}  # fmt: skip
        if len(set(ran.values())) > 1:
            raise ValueError(f"the runs went through different steps: {ran}")
        steps = next(iter(ran.values()), ())
        layout = cls(runs, {run: (labels or {}).get(run, run) for run in runs},
                     gated_steps(steps) if gates else steps, {})  # fmt: skip
        batches: defaultdict[tuple[str, int], list[int]] = defaultdict(list)
        for event, point in zip(events, points(layout, events), strict=True):
            if event.batch is not None:
                batches[event.run_id, point.step].append(event.batch)
        return cls(layout.runs, layout.labels, layout.steps,
                   {key: tuple(sorted(ids)) for key, ids in batches.items()})  # fmt: skip

    @property
    def end(self) -> Point:
        """The job's last step done: nothing is left but its exit."""
        return Point(len(self.runs) - 1, len(self.steps) - 1, PAST)

    def units(self, run: int) -> list[Point]:
        """Where each unit of work of the ``run``-th run starts, in order."""
        run_id = self.runs[run]
        return [Point(run, s, n) for s in range(len(self.steps))
                for n in range(len(self.batches.get((run_id, s), ())) or 1)]  # fmt: skip

    def label(self, run_id: str | None) -> str:
        """The run's label, or ``""`` when the job has one run only (the join's)."""
        return "" if run_id is None or len(self.runs) < 2 else self.labels.get(run_id, run_id)

    def describe(self, point: Point) -> str:
        """``KEY silver+2``: the run's label, the step (``#2``: its second time in the run),
        and its micro-batches committed before; ``KEY after silver`` once it is done."""
        step = self.steps[point.step]
        again = self.steps[: point.step].count(step)
        if again or step in self.steps[point.step + 1 :]:
            step = f"{step} #{again + 1}"
        where = (f"after {step}" if point.batches >= PAST else
                 f"{step}+{point.batches}" if point.batches else step)  # fmt: skip
        return " ".join(filter(None, [self.label(self.runs[point.run]), where]))


@dataclass(frozen=True)
class Target:
    """A kill's aim: the point, then ``fraction`` of the unit of work that starts there."""

    point: Point
    fraction: float


def _spread(count: int, bins: int, rng: random.Random) -> list[int]:
    """``count`` things over ``bins``: as many in each as can be, the rest to random bins."""
    per_bin = [count // bins] * bins
    for index in rng.sample(range(bins), count % bins):
        per_bin[index] += 1
    return per_bin


def plan_kills(layout: Layout, kills: int, seed: int) -> list[Target]:
    """``kills`` targets in the job's order: spread over its runs, within each run over its
    units of work (micro-batches, steps), each at a seeded random fraction of its unit.

    Two targets at the same point are two lives killed in the same unit: the second
    one in the job resumed after the first.
    """
    rng = random.Random(seed)  # noqa: S311 - a reproducible plan, not a secret
    targets = []
    for run, in_run in enumerate(_spread(kills, len(layout.runs), rng)):
        units = layout.units(run)
        for unit, count in zip(units, _spread(in_run, len(units), rng), strict=True):
            targets.extend(Target(unit, rng.random()) for _ in range(count))
    return targets


class Progress:
    """The point one life of a job has reached, moved by its step events as they come.

    A step that comes twice in a run is told apart by how often it started in this life
    (each life of the join drains every phase, the ones done before quickly).
    """

    def __init__(self, layout: Layout, committed: dict[tuple[str, str], int] | None = None) -> None:
        """Follow a life of a job of this ``layout`` from its start.

        Args:
            layout: the job's.
            committed: the last micro-batch each ``(run id, step)``'s streaming query had
                committed when this life started (its checkpoint's), updated by this
                life's lines.
        """
        self.layout = layout
        self.committed = {} if committed is None else committed
        self._started: defaultdict[tuple[str, str], int] = defaultdict(int)
        self.points: list[Point] = []
        """The point each event moved the job to, in order."""

    def advance(self, events: Sequence[StepEvent]) -> Point | None:
        """Take the events past those already taken (``events`` is the life's so far); the
        point reached, None before the first step.

        Raises:
            ValueError: an event of a run or step the layout does not know.
        """
        layout = self.layout
        for event in events[len(self.points) :]:
            occurrences = [i for i, step in enumerate(layout.steps) if step == event.step]
            seen = self._started[event.run_id, event.step] - (event.event != "started")
            if event.run_id not in layout.runs or not 0 <= seen < len(occurrences):
                raise ValueError(f"run {event.run_id}, step {event.step!r} {event.event}: not in "
                                 f"the job's layout ({list(layout.steps)})")  # fmt: skip
            if event.event == "started":
                self._started[event.run_id, event.step] += 1
            elif event.batch is not None:
                key = (event.run_id, event.step)
                self.committed[key] = max(self.committed.get(key, -1), event.batch)
            point = Point(layout.runs.index(event.run_id), occurrences[seen], PAST)
            self.points.append(point if event.event == "done" else self._counted(point))
        return self.points[-1] if self.points else None

    def current(self) -> Point | None:
        """The point reached, its micro-batches counted from ``committed`` as it is now (the
        harness reads the checkpoints again once the job is frozen: a batch committed just
        before the freeze may have had no line yet)."""
        if not self.points or self.points[-1].batches >= PAST:
            return self.points[-1] if self.points else None
        return self._counted(self.points[-1])

    def _counted(self, point: Point) -> Point:
        run_id, step = self.layout.runs[point.run], self.layout.steps[point.step]
        ids = self.layout.batches.get((run_id, point.step), ())
        return Point(
            point.run, point.step, bisect_right(ids, self.committed.get((run_id, step), -1))
        )


def points(layout: Layout, events: Sequence[StepEvent]) -> list[Point]:
    """The point each event of a job's first life (nothing committed before) moved it to."""
    progress = Progress(layout)
    progress.advance(events)
    return progress.points


class UnitSeconds:
    """How long each unit of work took when it was last seen to its end, in any life."""

    def __init__(self, default_s: float = 2.0) -> None:
        """``default_s``: the length assumed of a unit of a step never seen to its end."""
        self._seen: dict[tuple[str, int, int], float] = {}
        self._default = default_s

    def observe(
        self, layout: Layout, events: Sequence[StepEvent], reached: Sequence[Point]
    ) -> None:
        """Record the units of one life (its events, and the points they moved it to): each
        from the line that started it to the next one."""
        for event, point, following in zip(events, reached, events[1:], strict=False):
            if point.batches < PAST:
                key = (layout.runs[point.run], point.step, point.batches)
                self._seen[key] = following.seen_s - event.seen_s

    def seconds(self, layout: Layout, point: Point) -> float:
        """The unit's length: as last seen; else the mean of the same unit of the other runs;
        else of the step's units; else the default."""
        key = (layout.runs[point.run], point.step, point.batches)
        if key in self._seen:
            return self._seen[key]
        step = layout.steps[point.step]
        for same_batch in (True, False):
            alike = [seconds for (_run, s, n), seconds in self._seen.items()
                     if layout.steps[s] == step and (n == point.batches or not same_batch)]  # fmt: skip
            if alike:
                return sum(alike) / len(alike)
        return self._default
