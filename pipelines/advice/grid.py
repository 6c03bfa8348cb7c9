"""Every grouping at several W and loads, routed once per (grouping, W).

A routing's balance, dist_cost and capacity do not depend on the load; only the
queue's latencies do. So each (grouping, W) routes the tuples once, as the job
would (each splitter its own grouping instance, fed its tuples in order, batch
by batch), and each load then runs only the FIFO queue model over the routed
tuples: a few numpy passes. Every figure comes from
:func:`gold.metrics.summary.metric_row`, the one definition gold and
``dkg simulate`` use, so a point here equals ``dkg simulate``'s cumulative row
for the same tuples, W and load.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from gold.metrics.summary import MetricRow, metric_row
from gold.schemas import CUMULATIVE_WINDOW_START_MS
from pipelines.advice.sampled import SampledTuples
from pipelines.simulate import GroupingChoice
from silver.groupings.hashing import hash_keys
from silver.groupings.registry import make_grouping
from silver.queueing import FifoQueueModel, arrival_speed, latency_bucket

__all__ = ["GridPoint", "GridSettings", "route", "simulate_grid"]


@dataclass(frozen=True)
class GridSettings:
    """Where to measure, and how to route.

    Attributes:
        workers: the W values.
        loads: the workers' mean utilisations (``run.load``) for the queue model.
        process_ms: service time per tuple.
        splitters: routing instances, each with its own grouping.
        by_partition: a tuple goes to the splitter of its Kafka partition (partition
            mod splitters, as the job deals them); False: dealt round-robin, as
            ``dkg simulate`` deals a file's tuples.
        batch_size: tuples per routing call (each splitter routes its part of a batch).
    """

    workers: tuple[int, ...]
    loads: tuple[float, ...]
    process_ms: float
    splitters: int = 1
    by_partition: bool = True
    batch_size: int = 10_000


@dataclass(frozen=True)
class GridPoint:
    """One grouping at one W and load.

    Attributes:
        label: the grouping as asked (``DYNAMIC_KEY(mode=seed)``).
        grouping: its name.
        workers: W.
        load: the workers' mean utilisation the arrivals make.
        row: the cumulative metrics (p50/p99 are 0 when ``has_latency`` is False).
        has_latency: the stream's rate was known, so the queue model ran.
        process_ms: service time per tuple.
    """

    label: str
    grouping: str
    workers: int
    load: float
    row: MetricRow
    has_latency: bool
    process_ms: float

    @property
    def saturation_load(self) -> float:
        """The mean utilisation at which the busiest worker is 100 % busy: mean load / max load."""
        return self.row.capacity * self.process_ms / (1000.0 * self.workers)

    @property
    def keeps_up(self) -> bool:
        """The busiest worker is below 100 % busy at ``load``."""
        return self.load < self.saturation_load

    @property
    def p99_ms(self) -> float | None:
        """p99 latency in the queue model (None: the rate, hence the arrivals, unknown)."""
        return self.row.p99_ms if self.has_latency else None

    def to_dict(self) -> dict[str, Any]:
        """Plain values, for JSON."""
        row = self.row.to_dict()
        for name in ("scope", "window_start_ms", "workers", "throughput"):
            row.pop(name, None)
        if not self.has_latency:
            row.update(p50_ms=None, p99_ms=None, makespan_ms=None)
        return {"grouping": self.label, "workers": self.workers, "load": self.load, **row,
                "saturation_load": self.saturation_load, "keeps_up": self.keeps_up}  # fmt: skip


def _splitter_of(tuples: SampledTuples, splitters: int, by_partition: bool) -> np.ndarray:
    if by_partition:
        return (tuples.partitions % splitters).astype(np.int64)
    return np.arange(len(tuples)) % splitters


def route(tuples: SampledTuples, choice: GroupingChoice, workers: int,
          settings: GridSettings) -> np.ndarray:  # fmt: skip
    """Each tuple's worker under ``choice`` at W = ``workers`` (int32, aligned with ``tuples``)."""
    owner = _splitter_of(tuples, settings.splitters, settings.by_partition)
    mine = [np.flatnonzero(owner == s) for s in range(settings.splitters)]
    groupings = [make_grouping(choice.name, workers, choice.params)
                 for _ in range(settings.splitters)]  # fmt: skip
    routed = np.empty(len(tuples), dtype=np.int32)
    for begin in range(0, len(tuples), settings.batch_size):
        end = begin + settings.batch_size
        for grouping, indexes in zip(groupings, mine, strict=True):
            part = indexes[np.searchsorted(indexes, begin) : np.searchsorted(indexes, end)]
            if len(part):
                routed[part] = grouping.route(tuples.keys[part], tuples.event_times_ms[part])
    return routed


@dataclass(frozen=True)
class _Keys:
    """What every routing of the tuples shares: key codes and KEY's home hashes."""

    codes: np.ndarray
    distinct: int
    homes: np.ndarray

    @classmethod
    def of(cls, tuples: SampledTuples) -> _Keys:
        codes, distinct = pd.factorize(tuples.keys)
        return cls(codes.astype(np.int64), len(distinct),
                   hash_keys(tuples.keys).home.astype(np.int64))  # fmt: skip


def _rows(tuples: SampledTuples, routed: np.ndarray, keys: _Keys, workers: int,
          settings: GridSettings, tuples_per_s: float | None,
          seconds: float) -> list[tuple[float, MetricRow]]:  # fmt: skip
    loads = np.bincount(routed, minlength=workers)
    key_loads = np.bincount(keys.homes % workers, minlength=workers)
    pairs = len(np.unique(keys.codes * workers + routed))
    throughput = len(tuples) / seconds if seconds > 0 else float("inf")
    rows = []
    for load in settings.loads:
        latency, makespan = None, 0.0
        if tuples_per_s is not None:
            speed = arrival_speed(load, workers, settings.process_ms, tuples_per_s)
            model = FifoQueueModel(workers, settings.process_ms, speed)
            waits = model.add(routed, tuples.event_times_ms)
            latency = np.unique(latency_bucket(waits), return_counts=True)
            makespan = model.makespan_ms
        row = metric_row("cumulative", CUMULATIVE_WINDOW_START_MS, loads, key_loads,
                         keys.distinct, pairs, latency, makespan, throughput, settings.process_ms)  # fmt: skip
        rows.append((load, row))
    return rows


def simulate_grid(tuples: SampledTuples, choices: Sequence[GroupingChoice],
                  settings: GridSettings, tuples_per_s: float | None,
                  progress: Callable[[int], None] | None = None) -> list[GridPoint]:  # fmt: skip
    """Every choice at every W (routed once) and every load (the queue model only).

    Args:
        tuples: the stream, in routing order (event time).
        choices: the groupings.
        settings: the W values, loads, queue model and splitters.
        tuples_per_s: the stream's tuples per second of event time, which turns a
            load into arrivals (:func:`silver.queueing.arrival_speed`); None: no
            latency figures.
        progress: called with the routings done so far.
    """
    keys = _Keys.of(tuples)
    points = []
    for choice in choices:
        for workers in settings.workers:
            started = time.perf_counter()
            routed = route(tuples, choice, workers, settings)
            seconds = time.perf_counter() - started
            points += [GridPoint(choice.label, choice.name, workers, load, row,
                                 tuples_per_s is not None, settings.process_ms)
                       for load, row in _rows(tuples, routed, keys, workers, settings,
                                              tuples_per_s, seconds)]  # fmt: skip
            if progress is not None:
                progress(len(points) // len(settings.loads))
    return points
