"""A job's plans: one :class:`core.run_plan.RunPlan` per grouping, from the settings and the source.

Pure: no broker, no Spark. Run ids are derived from what defines a run (topic,
grouping, workers, splitters, parameters, windows, queue model), so the same
command started again resumes its runs, and changing any of these is a new run.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from core.config import RunConfig
from core.run_plan import RunPlan
from pipelines.simulate import GroupingChoice
from silver.queueing import arrival_speed, offered_load

__all__ = ["plan_runs", "queue_speed", "run_id_for"]


def run_id_for(topic: str, label: str, plan: Mapping[str, Any]) -> str:
    """A stable id: the same run asked again resumes rather than duplicates.

    ``plan`` holds everything that shapes the run's tables beyond topic and label
    (workers, splitters, parameters, windows, queue model): changing any of them
    is another run.
    """
    digest = hashlib.sha256(json.dumps(plan, sort_keys=True).encode()).hexdigest()[:8]
    # A label such as DYNAMIC_KEY(mode=seed) must make a valid checkpoint name.
    name = re.sub(r"[^a-z0-9_.-]+", "_", label.lower()).strip("_")
    return f"{topic}.{name}.w{plan['workers']}.s{plan['splitters']}.{digest}"


def queue_speed(run: RunConfig, tuples_per_s: float | None) -> tuple[float, float | None]:
    """The queue model's speed-up and the load it makes: ``run.speed`` if set, else what
    makes ``run.load`` at the stream's tuple rate; a stream of unknown rate (a live
    topic) arrives at its own pace (speed 1, load unknown)."""
    workers, process_ms = run.workers, run.process_ms
    if run.speed is not None:
        load = None if tuples_per_s is None else offered_load(run.speed, workers, process_ms,
                                                               tuples_per_s)  # fmt: skip
        return run.speed, load
    if tuples_per_s is None:
        return 1.0, None
    return arrival_speed(run.load, workers, process_ms, tuples_per_s), run.load


def plan_runs(run: RunConfig, topic: str, source: str, source_type: str,
              choices: Sequence[GroupingChoice], splitters: int, messages: int | None,
              tuples_per_s: float | None) -> list[RunPlan]:  # fmt: skip
    """One plan per grouping over the same topic, settings and queue model."""
    speed, load = queue_speed(run, tuples_per_s)
    shape = {"workers": run.workers, "splitters": splitters, "speed": round(speed, 9),
             "process_ms": run.process_ms, "work": run.work,
             "worker_window_ms": run.worker_window_ms,
             "aggregation_window_ms": run.aggregation_window_ms}  # fmt: skip
    return [RunPlan(run_id=run_id_for(topic, choice.label, {**shape, "params": choice.params}),
                    source_type=source_type, grouping=choice.name, splitters=splitters, run=run,
                    params=dict(choice.params), speed=speed, load=load, label=choice.label,
                    source=source, topic=topic, messages=messages)
            for choice in choices]  # fmt: skip
