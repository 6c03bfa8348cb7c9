"""In-process simulation: route a dataset through groupings, no Spark.

Each splitter owns its own grouping instance (tuples are dealt to splitters
round-robin, as Spark's ``groupBy(splitter)`` will), and every splitter
serializes its state once per routed batch, as the streaming job does.
Routing throughput counts only ``route()`` + ``snapshot()``; the one-time
compilation of a grouping's kernel is done before the clock starts.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bronze.datasets.base import TupleBatch
from gold.metrics import RunMetrics, ServedTuples
from silver.groupings.base import Grouping, HotKey
from silver.groupings.registry import GROUPING_NAMES, GroupingConfigError, make_grouping

__all__ = [
    "GroupingChoice",
    "SimulationResult",
    "SimulationSettings",
    "parse_grouping_choices",
    "simulate",
    "tuples_per_second",
]

_CHOICE = re.compile(r"\s*([A-Za-z_]+)\s*(?:\(([^()]*)\))?\s*(?:,|$)")


@dataclass(frozen=True)
class GroupingChoice:
    """One grouping to run: its table label, name and parameters."""

    label: str
    name: str
    params: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class SimulationSettings:
    """How to route and measure.

    Attributes:
        workers: W.
        splitters: routing instances (tuples dealt round-robin).
        worker_window_ms: the workers' window (``run.worker_window_ms``).
        window_ms: the metrics' window (``run.aggregation_window_ms``).
        process_ms: the queue model's service time per tuple.
        speed: the queue model's event-time speed-up (resolved from the load).
    """

    workers: int
    splitters: int
    worker_window_ms: int
    window_ms: int
    process_ms: float
    speed: float


@dataclass(frozen=True)
class SimulationResult:
    """One grouping's run: metrics, routing time and its hot keys at the end."""

    choice: GroupingChoice
    metrics: RunMetrics
    routing_seconds: float
    tuples: int
    hot_keys: list[HotKey]

    @property
    def throughput(self) -> float:
        """Routed tuples per second of routing."""
        return self.tuples / self.routing_seconds if self.routing_seconds > 0 else float("inf")


def tuples_per_second(batches: Sequence[TupleBatch]) -> float | None:
    """Tuples per second of event time over the batches' span (None: a single instant)."""
    times = [b.event_times_ms for b in batches if len(b)]
    if not times:
        return None
    span_ms = max(int(t.max()) for t in times) - min(int(t.min()) for t in times)
    return sum(len(t) for t in times) * 1000.0 / span_ms if span_ms > 0 else None


def _parse_value(text: str) -> Any:
    text = text.strip()
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return {"true": True, "false": False}.get(text.lower(), text)


def parse_grouping_choices(
    text: str, configured: Callable[[str], dict[str, Any]]
) -> list[GroupingChoice]:
    """Parse ``--grouping``: ``all``, or names, each optionally with parameters.

    Examples: ``all``; ``KEY,PARTIAL_KEY``; ``DYNAMIC_KEY(mode=seed),DYNAMIC_KEY``.

    Args:
        text: the option's value.
        configured: a grouping's parameters from the config (overridden by the text).
    """
    if not text.strip() or text.strip().lower() == "all":
        return [GroupingChoice(n, n, configured(n)) for n in GROUPING_NAMES]
    choices, position = [], 0
    while position < len(text):
        match = _CHOICE.match(text, position)
        if match is None or match.end() == position:
            raise GroupingConfigError(
                f"cannot read grouping list {text!r} near {text[position:]!r}"
            )
        name = match.group(1).upper()
        if name not in GROUPING_NAMES:
            raise GroupingConfigError(
                f"unknown grouping {match.group(1)!r}; choose from {', '.join(GROUPING_NAMES)}"
            )
        params = configured(name)
        label = name
        if match.group(2):
            for item in filter(None, (p.strip() for p in match.group(2).split(","))):
                key, sep, value = item.partition("=")
                if not sep:
                    raise GroupingConfigError(f"expected key=value in {name}({match.group(2)})")
                params[key.strip()] = _parse_value(value)
            label = f"{name}({match.group(2).strip()})"
        choices.append(GroupingChoice(label, name, params))
        position = match.end()
    return choices


def _warm_up(choice: GroupingChoice, workers: int) -> None:
    # Compile the kernel on a throwaway instance so the clock measures routing only.
    grouping = make_grouping(choice.name, workers, choice.params)
    grouping.route(np.array(["warm", "up"], dtype=object), np.zeros(2, dtype=np.int64))
    grouping.snapshot()


def _route_batch(
    splitters: Sequence[Grouping[Any, Any]], batch: TupleBatch, offset: int
) -> tuple[np.ndarray, float]:
    count = len(splitters)
    routed = np.empty(len(batch), dtype=np.int32)
    started = time.perf_counter()
    for index, grouping in enumerate(splitters):
        part = slice((index - offset) % count, None, count)
        routed[part] = grouping.route(batch.keys[part], batch.event_times_ms[part])
        grouping.snapshot()
    return routed, time.perf_counter() - started


def simulate(
    batches: Iterable[TupleBatch],
    choices: Sequence[GroupingChoice],
    settings: SimulationSettings,
    progress: Callable[[str, int], None] | None = None,
) -> list[SimulationResult]:
    """Route the same tuples through each grouping and measure them.

    Args:
        batches: the tuples (re-iterated once per grouping, so pass a list).
        choices: groupings to run, in table order.
        settings: workers, splitters and the metric settings.
        progress: called with (label, tuples routed so far) after each batch.
    """
    batches = list(batches)
    results = []
    for choice in choices:
        _warm_up(choice, settings.workers)
        splitters = [
            make_grouping(choice.name, settings.workers, choice.params)
            for _ in range(settings.splitters)
        ]
        metrics = ServedTuples(settings.workers, settings.worker_window_ms, settings.window_ms,
                               settings.process_ms, settings.speed)  # fmt: skip
        seconds, offset = 0.0, 0
        for batch in batches:
            routed, elapsed = _route_batch(splitters, batch, offset)
            seconds += elapsed
            offset += len(batch)
            metrics.add(batch.keys, routed, batch.event_times_ms, batch.counts)
            if progress is not None:
                progress(choice.label, offset)
        hot = [k for s in splitters for k in s.hot_keys()]
        results.append(SimulationResult(choice, metrics.result(seconds), seconds, offset, hot))
    return results
