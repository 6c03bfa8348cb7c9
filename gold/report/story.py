"""The paragraph on top of the report: what balance buys, written from the figure data.

A pure function of :class:`gold.report.data.ReportData`, so the words and the
pictures cannot disagree. It compares a *reference* run, KEY when one is shown
(else the run with the lowest capacity), with the *best* other run: the highest
capacity, ties to the lowest dist_cost (:func:`gold.metrics.ranking.best_by_capacity`). A worker saturates in a window when
its utilisation in the queue model reaches 1 (:mod:`gold.report.queue_figures`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import pandas as pd

from gold.metrics.ranking import best_by_capacity, latency_text
from gold.report.data import ReportData

__all__ = ["REFERENCE", "write_story"]

REFERENCE = "KEY"
"""The grouping every other is measured against when it is shown."""

@dataclass(frozen=True)
class _Run:
    label: str
    grouping: str | None
    capacity: float | None
    capacity_vs_key: float | None
    dist_cost: float | None
    worst_p99_ms: float | None
    saturation: tuple[int, int, float] | None  # first saturated window: start ms, worker, minute
    peak: float | None  # the highest utilisation of any window; None: unknown
    offered_per_s: float | None


def _saturation(util: dict[str, Any], first: int) -> tuple[int, int, float] | None:
    for start, worker, value in zip(util["window_start_ms"], util["worker"], util["utilisation"],
                                    strict=True):  # fmt: skip
        if value is not None and value >= 1:
            return start, worker, (start - first) / 60_000
    return None


def _runs(data: ReportData) -> list[_Run]:
    windows = {r["run_id"]: r for r in data.windows}
    utils = {r["run_id"]: r for r in data.utilisation}
    offered = {r["run_id"]: r["offered_per_s"] for r in data.capacity}
    out = []
    for row in data.summary:
        run_id = row["run_id"]
        p99s = [v for v in windows[run_id]["p99_ms"] if v is not None]
        util = utils[run_id]
        first = min([*windows[run_id]["window_start_ms"], *util["window_start_ms"]], default=0)
        known = [v for v in util["utilisation"] if v is not None]
        out.append(_Run(label=row["label"], grouping=row["grouping"], capacity=row["capacity"],
                        capacity_vs_key=row["capacity_vs_key"], dist_cost=row["dist_cost"],
                        worst_p99_ms=max(p99s) if p99s else row["p99_ms"],
                        saturation=_saturation(util, first), peak=max(known) if known else None,
                        offered_per_s=offered[run_id]))  # fmt: skip
    return out


def _busy(utilisation: float) -> str:
    # Rounded down: a worker that never saturates never reads "100 %".
    percent = 100 * utilisation
    if percent >= 10:
        return f"at most {math.floor(percent)} %"
    if percent >= 0.1:
        return f"at most {math.floor(10 * percent) / 10:.1f} %"
    return "under 0.1 %"


def _rate(per_s: float) -> str:
    return f"{per_s:,.0f}" if per_s >= 100 else f"{per_s:.3g}"


def _when(ms: int) -> str:
    stamp = pd.Timestamp(ms, unit="ms", tz="UTC")
    return stamp.strftime("%Y-%m-%d %H:%M UTC" if ms % 60_000 == 0 else "%Y-%m-%d %H:%M:%S UTC")


def _reference(runs: list[_Run]) -> _Run:
    keys = [r for r in runs if r.grouping == REFERENCE]
    rated = [r for r in runs if r.capacity is not None]
    if keys or not rated:
        return (keys or runs)[0]
    return min(rated, key=lambda r: r.capacity or 0.0)


def _best(runs: list[_Run], reference: _Run) -> _Run | None:
    others = [r for r in runs if r is not reference]
    return best_by_capacity(others, lambda r: r.capacity, lambda r: r.dist_cost)


def _reference_sentence(run: _Run) -> str:
    p99 = f"its p99 reaches {latency_text(run.worst_p99_ms)}."
    if run.saturation is not None:
        start, worker, minute = run.saturation
        return f"{run.label}'s worker {worker} saturates at {_when(start)} (minute {minute:.4g}); {p99}"
    if run.peak is not None:
        return f"{run.label}'s busiest worker never saturates ({_busy(run.peak)} busy); {p99}"
    return f"{run.label}'s p99 reaches {latency_text(run.worst_p99_ms)}."


def _merge_work(run: _Run, reference: _Run) -> str:
    if run.dist_cost is None or not reference.dist_cost:
        return ""
    more = 100 * (run.dist_cost / reference.dist_cost - 1)
    cost = f"(dist_cost {run.dist_cost:.2f})"
    if abs(more) < 0.5:
        return f" for the same merge work {cost}"
    return f" for {abs(more):.0f} % {'more' if more > 0 else 'less'} merge work {cost}"


def _ratio(run: _Run, reference: _Run) -> float | None:
    # Gold's own ratio when the reference is KEY: KEY's capacity on the run's own tuples.
    if reference.grouping == REFERENCE and run.capacity_vs_key is not None:
        return run.capacity_vs_key
    if run.capacity is None or not reference.capacity:
        return None
    return run.capacity / reference.capacity


def _best_sentence(run: _Run, reference: _Run) -> str:
    p99 = latency_text(run.worst_p99_ms)
    if run.saturation is not None:
        start, worker, minute = run.saturation
        lead = (f"{run.label} also saturates (worker {worker} at {_when(start)}, "
                f"minute {minute:.4g}) with p99 up to {p99}")  # fmt: skip
    elif run.peak is not None:
        lead = f"{run.label} keeps p99 within {p99}"
    else:
        lead = f"{run.label} reaches p99 {p99}"
    ratio = _ratio(run, reference)
    capacity = f", with {ratio:.2f}x {reference.label}'s capacity" if ratio is not None else ""
    return f"{lead}{_merge_work(run, reference)}{capacity}."


def _offered_sentence(runs: list[_Run]) -> str | None:
    rated = [r for r in runs if r.offered_per_s is not None and r.capacity is not None]
    if not rated:
        return None
    short = [r for r in rated if (r.capacity or 0.0) <= (r.offered_per_s or 0.0)]
    if not short:
        return "Every run's capacity is above the arrival rate it was offered."
    behind = ", ".join(f"{r.label} (capacity {_rate(r.capacity or 0.0)} of "
                       f"{_rate(r.offered_per_s or 0.0)} tuples/s)" for r in short)  # fmt: skip
    return f"Falling behind the offered arrival rate: {behind}."


def write_story(data: ReportData) -> str:
    """The paragraph: the reference's saturation and p99, the best run against it, who falls behind.

    Args:
        data: The report's figure data (at least one run).
    """
    runs = _runs(data)
    reference = _reference(runs)
    sentences = [_reference_sentence(reference)]
    best = _best(runs, reference)
    if best is not None:
        sentences.append(_best_sentence(best, reference))
    offered = _offered_sentence(runs)
    if offered is not None:
        sentences.append(offered)
    return " ".join(sentences)
