"""Which grouping to run: the most capacity at a modest merge cost, and why.

The rule, at the asked W and load:

1. Keep the groupings whose merge cost is modest: ``dist_cost`` (workers per key,
   the partial counts to merge) at most ``max_dist_cost`` (2 by default: a key on
   two workers on average, PARTIAL_KEY's bound), and no more than the capacity
   it buys over KEY (``capacity_vs_key >= dist_cost``: twice KEY's capacity may
   cost up to twice the partial counts, 4 % more capacity may not cost 96 % more).
   KEY (1 and 1) always qualifies; SHUFFLE, which spreads every key over every
   worker, rarely does.
2. Of those, take the one with the most capacity (the arrival rate at which its
   busiest worker saturates); capacities within 2 % of the highest tie, and the
   tie goes to the lower dist_cost (:func:`gold.metrics.ranking.best_by_capacity`,
   the rule ``dkg run``, ``dkg simulate`` and the report use), KEY first among
   equals. So a topic whose keys are spread thinly gets KEY, and one with a key
   over a worker's share gets a grouping that splits it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from gold.metrics.ranking import CAPACITY_TIE, best_by_capacity, latency_text
from pipelines.advice.grid import GridPoint
from pipelines.advice.profile import SkewProfile

__all__ = ["MAX_DIST_COST", "Recommendation", "is_modest", "recommend"]

MAX_DIST_COST = 2.0
"""The largest dist_cost the rule calls modest (``--max-dist-cost``)."""

_LOW_DRIFT = 0.5  # below this hot-set overlap, the hot set is said to drift
_SLACK = 1e-9  # KEY's own capacity_vs_key is 1 up to rounding


def is_modest(point: GridPoint, max_dist_cost: float = MAX_DIST_COST) -> bool:
    """The rule's first step: a merge cost within ``max_dist_cost`` and within what it buys."""
    row = point.row
    return row.dist_cost <= max_dist_cost and row.capacity_vs_key + _SLACK >= row.dist_cost


@dataclass(frozen=True)
class Recommendation:
    """The pick at one W and load, and every grouping there, the pick first.

    Attributes:
        pick: the recommended grouping's figures.
        alternatives: every grouping at the same W and load, in rule order (the pick first).
        reason: one sentence on why.
        notes: what else the figures say (a pick that still falls behind, a drifting hot set).
    """

    pick: GridPoint
    alternatives: list[GridPoint]
    reason: str
    notes: list[str] = field(default_factory=list)


def _capacity(point: GridPoint) -> float:
    return point.row.capacity


def _dist_cost(point: GridPoint) -> float:
    return point.row.dist_cost


def _first_key(points: Sequence[GridPoint]) -> list[GridPoint]:
    # best_by_capacity keeps the first of equal dist_costs: KEY, if it is one of them.
    return sorted(points, key=lambda p: p.grouping != "KEY")


def _share_sentence(profile: SkewProfile, workers: int) -> str:
    share, fair = profile.top_share, 1.0 / workers
    if share > fair:
        return (f"the top key holds {share:.1%} of tuples, {share * workers:.1f}x a worker's "
                f"share at W={workers}")  # fmt: skip
    if profile.peak_share > fair:
        return (f"no key holds more than a worker's share of the whole sample ({fair:.1%} at "
                f"W={workers}), but {profile.peak_key} holds {profile.peak_share:.1%} of one "
                f"tenth of its event time, {profile.peak_share * workers:.1f}x a worker's share")  # fmt: skip
    return (f"no key holds more than a worker's share ({fair:.1%} at W={workers}; the top "
            f"key: {share * 100:.2g}%)")  # fmt: skip


def _reason(pick: GridPoint, key: GridPoint | None, profile: SkewProfile) -> str:
    shares = _share_sentence(profile, pick.workers)
    if key is None:
        return (f"{shares}; {pick.label} has the most capacity at a modest dist_cost "
                f"({pick.row.dist_cost:.2f})")  # fmt: skip
    busiest = (f"KEY's busiest worker ({max(key.row.loads) / max(1, key.row.tuples):.1%} of "
               f"tuples) saturates at {key.saturation_load:.0%} load")  # fmt: skip
    if pick is key:
        return (f"{shares}: {busiest}, and no grouping that splits keys buys more than "
                f"{CAPACITY_TIE:.0%} capacity over it at a modest merge cost; KEY keeps each key "
                f"on one worker (dist_cost 1, p99 {latency_text(key.p99_ms)})")  # fmt: skip
    return (f"{shares}: {busiest}; {pick.label} saturates at {pick.saturation_load:.0%} "
            f"({pick.row.capacity_vs_key:.2f}x KEY's capacity) for dist_cost "
            f"{pick.row.dist_cost:.2f}")  # fmt: skip


def _notes(pick: GridPoint, tied: Sequence[GridPoint], left_out: Sequence[GridPoint],
           profile: SkewProfile) -> list[str]:  # fmt: skip
    notes = []
    bigger = [p for p in left_out if p.row.capacity > pick.row.capacity * (1 + CAPACITY_TIE)]
    if bigger:
        other = max(bigger, key=lambda p: p.row.capacity)
        notes.append(f"{other.label} has {other.row.capacity / pick.row.capacity - 1:.1%} more "
                     f"capacity but dist_cost {other.row.dist_cost:.2f}: more merge work than "
                     "the capacity it buys")  # fmt: skip
    if not pick.keeps_up:
        notes.append(f"at {pick.load:.0%} load even {pick.label}'s busiest worker falls behind "
                     f"(it saturates at {pick.saturation_load:.0%}): add workers or lower "
                     "the load")  # fmt: skip
    faster = [p for p in tied if p is not pick and p.p99_ms is not None and pick.p99_ms is not None
              and p.p99_ms < pick.p99_ms / 2]  # fmt: skip
    if faster:
        other = min(faster, key=lambda p: p.p99_ms or 0.0)
        notes.append(f"{other.label} has as much capacity with a lower p99 "
                     f"({latency_text(other.p99_ms)} against {latency_text(pick.p99_ms)}) "
                     f"for dist_cost {other.row.dist_cost:.2f}")  # fmt: skip
    if profile.drift is not None and profile.drift < _LOW_DRIFT:
        notes.append(f"the hot set drifts: the hot keys of the first and last thirds of event "
                     f"time overlap {profile.drift:.0%} by share (hottest {profile.first_hot}, "
                     f"then {profile.last_hot}): the grouping must find new hot keys as it goes")  # fmt: skip
    return notes


def recommend(points: Sequence[GridPoint], profile: SkewProfile,
              max_dist_cost: float = MAX_DIST_COST) -> Recommendation:  # fmt: skip
    """The rule's pick among ``points`` (every grouping at one W and load).

    Args:
        points: the groupings' figures at the same W and load.
        profile: the stream's skew (for the reason).
        max_dist_cost: the largest modest dist_cost.

    Raises:
        ValueError: no points.
    """
    if not points:
        raise ValueError("no grouping to recommend from")
    modest = [p for p in points if is_modest(p, max_dist_cost)] or list(points)
    ordered = _first_key(modest)
    pick = best_by_capacity(ordered, _capacity, _dist_cost)
    assert pick is not None  # noqa: S101 - every point has a capacity
    top = max(p.row.capacity for p in modest)
    tied = [p for p in modest if p.row.capacity >= top * (1 - CAPACITY_TIE)]
    key = next((p for p in points if p.grouping == "KEY"), None)
    modest_ids = {id(p) for p in modest}
    rest = sorted((p for p in points if p is not pick),
                  key=lambda p: (id(p) not in modest_ids, -p.row.capacity, p.row.dist_cost))  # fmt: skip
    left_out = [p for p in points if id(p) not in modest_ids]
    return Recommendation(pick, [pick, *rest], _reason(pick, key, profile),
                          _notes(pick, tied, left_out, profile))  # fmt: skip
