"""Which grouping a stream needs: measure its skew, simulate every grouping, apply one rule.

Pure: takes tuples (a topic's sample or a file's, :mod:`pipelines.advice.sampled`)
and returns an :class:`Advice`; ``dkg advise`` reads the topic and prints it.

1. The skew (:func:`pipelines.advice.profile.skew_profile`): top-key share, the
   keys over a worker's share at each W, drift of the hot set over event time.
2. Every grouping at every W of the grid, routed once each, and the queue model at
   every load (:func:`pipelines.advice.grid.simulate_grid`).
3. The rule (:func:`pipelines.advice.rule.recommend`) at the asked W and load:
   the most capacity at a modest dist_cost, ties within 2 % to the lower dist_cost.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from gold.metrics.ranking import CAPACITY_TIE
from pipelines.advice.grid import GridPoint, GridSettings, simulate_grid
from pipelines.advice.profile import SkewProfile, skew_profile
from pipelines.advice.rule import MAX_DIST_COST, Recommendation, recommend
from pipelines.advice.sampled import SampledTuples
from pipelines.simulate import GroupingChoice

__all__ = ["Advice", "AdviseSettings", "advise"]


@dataclass(frozen=True)
class AdviseSettings:
    """The operating point, and the grid around it.

    Attributes:
        workers: the W the recommendation is for (one of ``grid.workers``).
        load: the load it is for (one of ``grid.loads``).
        grid: every W and load to simulate, and how to route.
        max_dist_cost: the largest dist_cost the rule calls modest.
    """

    workers: int
    load: float
    grid: GridSettings
    max_dist_cost: float = MAX_DIST_COST

    def __post_init__(self) -> None:
        """The operating point must be on the grid."""
        if self.workers not in self.grid.workers or self.load not in self.grid.loads:
            raise ValueError("the asked W and load must be among the grid's")


@dataclass(frozen=True)
class Advice:
    """What was measured and what follows.

    Attributes:
        profile: the stream's skew.
        tuples_per_s: its tuples per second of event time (None: unknown).
        points: every grouping at every W and load.
        recommendation: the pick at the asked W and load.
        settings: what was simulated.
        seconds: wall time of the measuring and simulating.
    """

    profile: SkewProfile
    tuples_per_s: float | None
    points: list[GridPoint]
    recommendation: Recommendation
    settings: AdviseSettings
    seconds: float

    def at(self, workers: int, load: float) -> list[GridPoint]:
        """Every grouping at one W and load, in simulation order."""
        return [p for p in self.points if p.workers == workers and p.load == load]

    def to_dict(self) -> dict[str, Any]:
        """The advice as plain values (``dkg advise --json``)."""
        pick, profile = self.recommendation.pick, self.profile
        return {
            "recommendation": {"grouping": pick.label, "workers": pick.workers,
                               "load": pick.load, "reason": self.recommendation.reason,
                               "notes": list(self.recommendation.notes),
                               "figures": pick.to_dict()},
            "rule": {"max_dist_cost": self.settings.max_dist_cost, "capacity_tie": CAPACITY_TIE},
            "profile": {"tuples": profile.tuples, "distinct_keys": profile.distinct_keys,
                        "top_share": profile.top_share,
                        "top_keys": [{"key": k, "share": s} for k, s in profile.top_keys],
                        "keys_over_worker_share": {str(w): n
                                                   for w, n in profile.keys_over.items()},
                        "peak_share": profile.peak_share, "peak_key": profile.peak_key,
                        "hot_set_overlap": profile.drift, "first_hot": profile.first_hot,
                        "last_hot": profile.last_hot},
            "tuples_per_s": self.tuples_per_s,
            "process_ms": self.settings.grid.process_ms,
            "alternatives": [p.to_dict() for p in self.recommendation.alternatives],
            "grid": [p.to_dict() for p in self.points],
            "seconds": self.seconds,
        }  # fmt: skip


def advise(tuples: SampledTuples, choices: Sequence[GroupingChoice], settings: AdviseSettings,
           tuples_per_s: float | None,
           progress: Callable[[int], None] | None = None) -> Advice:  # fmt: skip
    """Measure, simulate and recommend.

    Args:
        tuples: the stream, in routing order (at least one tuple).
        choices: the groupings to compare.
        settings: the operating point and the grid.
        tuples_per_s: the stream's tuples per second of event time
            (:func:`pipelines.advice.sampled.tuples_per_second`); None: no latencies.
        progress: called with the routings done so far (of ``len(choices) * len(W)``).

    Raises:
        ValueError: no tuples or no choices.
    """
    if len(tuples) == 0 or not choices:
        raise ValueError("advice needs tuples and at least one grouping")
    started = time.perf_counter()
    profile = skew_profile(tuples.keys, tuples.event_times_ms, settings.grid.workers)
    points = simulate_grid(tuples, choices, settings.grid, tuples_per_s, progress)
    here = [p for p in points if p.workers == settings.workers and p.load == settings.load]
    recommendation = recommend(here, profile, settings.max_dist_cost)
    return Advice(profile, tuples_per_s, points, recommendation, settings,
                  time.perf_counter() - started)  # fmt: skip
