"""FIFO queue model: each worker serves its tuples in order, ``process_ms`` each.

Tuples arrive at ``(event_time - first_event_time) / speed``; a tuple's latency
is its completion minus its arrival (queueing delay + service), seed 003's
queueing delay. The recurrence ``c_i = max(a_i, c_{i-1}) + s`` has the closed
form ``c_i = (i + 1) s + max(c_prev, max_{j<=i} (a_j - j s))`` per worker, so a
batch is one cumulative max per worker, and batches fed one after another give
the same answer as one big batch.

Latency percentiles are taken over latencies kept to ``LATENCY_DIGITS``
significant digits (:func:`latency_bucket`): a worker then reports how many
tuples waited each rounded time, a histogram whose size is bounded by the range
of waits rather than by the tuples, and p50/p99 are off by at most 0.5 %.

What the model needs of a run is its *load*: the workers' mean utilisation,
arrival rate x ``process_ms`` / W. Below 1 for every worker, a tuple waits a few
service times; a worker whose share of the tuples pushes it past 1 falls behind
and its waits grow for as long as the overload lasts. :func:`arrival_speed` turns
a load into the event-time speed-up that produces it, and :func:`capacity_per_s`
says how fast tuples may arrive before a routing's busiest worker saturates.
"""

from __future__ import annotations

import numpy as np

__all__ = ["LATENCY_DIGITS", "FifoQueueModel", "arrival_speed", "capacity_per_s", "latency_bucket",
           "offered_load"]  # fmt: skip

LATENCY_DIGITS = 3
"""Significant digits latencies keep in the percentiles' histograms."""


def latency_bucket(latencies_ms: np.ndarray) -> np.ndarray:
    """``latencies_ms`` rounded to :data:`LATENCY_DIGITS` significant digits (0 stays 0)."""
    latencies = np.asarray(latencies_ms, dtype=np.float64)
    positive = latencies > 0
    magnitude = np.floor(np.log10(latencies, where=positive, out=np.zeros_like(latencies)))
    decimals = LATENCY_DIGITS - 1 - magnitude
    # Whole powers of ten only (10 ** -2 is inexact in binary): scale up, or step down.
    up, down = 10.0 ** np.maximum(decimals, 0), 10.0 ** np.maximum(-decimals, 0)
    return np.where(positive, np.round(latencies * up / down) * down / up, latencies)


def arrival_speed(load: float, workers: int, process_ms: float, tuples_per_s: float) -> float:
    """The event-time speed-up at which W workers are ``load`` busy on average.

    Args:
        load: the workers' mean utilisation (0.8: 80 % busy).
        workers: W.
        process_ms: service time per tuple.
        tuples_per_s: the stream's tuples per second of event time.
    """
    if min(load, workers, process_ms, tuples_per_s) <= 0:
        raise ValueError("load, workers, process_ms and the tuple rate must be positive")
    return load * workers * 1000.0 / (process_ms * tuples_per_s)


def offered_load(speed: float, workers: int, process_ms: float, tuples_per_s: float) -> float:
    """The workers' mean utilisation when tuples arrive at event time / ``speed`` (inverse of
    :func:`arrival_speed`)."""
    return speed * tuples_per_s * process_ms / (1000.0 * workers)


def capacity_per_s(loads: np.ndarray, process_ms: float) -> float:
    """The highest arrival rate (tuples per second) a routing sustains: the rate at which its
    busiest worker, given its share of the tuples, is exactly 100 % busy.

    Args:
        loads: tuples per worker (the routing's shares).
        process_ms: service time per tuple.

    Returns:
        ``1000 * sum(loads) / (process_ms * max(loads))``; 0 when no tuple was routed.
    """
    loads = np.asarray(loads, dtype=np.float64)
    peak = float(loads.max()) if len(loads) else 0.0
    return 1000.0 * float(loads.sum()) / (process_ms * peak) if peak > 0 else 0.0


class FifoQueueModel:
    """Per-worker FIFO servers, fed batch by batch in stream order."""

    def __init__(self, workers: int, process_ms: float = 1.0, speed: float = 1.0) -> None:
        if process_ms <= 0 or speed <= 0:
            raise ValueError("process_ms and speed must be positive")
        self.process_ms = process_ms
        self.speed = speed
        self.origin_ms: float | None = None
        self.last_completion = np.full(workers, -np.inf)

    @property
    def makespan_ms(self) -> float:
        """Last completion minus the first arrival (0 before any tuple)."""
        done = self.last_completion[np.isfinite(self.last_completion)]
        return float(done.max()) if len(done) else 0.0

    def add(self, workers: np.ndarray, event_times_ms: np.ndarray) -> np.ndarray:
        """Serve a batch; returns each tuple's latency in ms, aligned with the input."""
        workers = np.asarray(workers)
        times = np.asarray(event_times_ms, dtype=np.float64)
        latencies = np.empty(len(times))
        if len(times) == 0:
            return latencies
        if self.origin_ms is None:
            self.origin_ms = float(times[0])
        arrivals = (times - self.origin_ms) / self.speed
        order = np.argsort(workers, kind="stable")
        bounds = np.flatnonzero(np.diff(workers[order])) + 1
        s = self.process_ms
        for group in np.split(order, bounds):
            worker = workers[group[0]]
            a = arrivals[group]
            steps = np.arange(len(group)) * s
            ready = np.maximum.accumulate(a - steps)
            completion = steps + s + np.maximum(ready, self.last_completion[worker])
            latencies[group] = completion - a
            self.last_completion[worker] = completion[-1]
        return latencies
