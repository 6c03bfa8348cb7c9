"""SHUFFLE: round robin over all workers, per splitter."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from silver.groupings.base import Grouping, GroupingParams
from silver.groupings.hashing import KeyHashes

__all__ = ["ShuffleGrouping", "ShuffleParams", "ShuffleState"]


class ShuffleParams(GroupingParams):
    """SHUFFLE has no parameters."""


@dataclass
class ShuffleState:
    """Where the round robin goes next."""

    workers: int
    next_worker: int


class ShuffleGrouping(Grouping[ShuffleParams, ShuffleState]):
    """Perfect balance, but every key is split over every worker."""

    name = "SHUFFLE"
    params_type = ShuffleParams
    state_type = ShuffleState

    def initial_state(self) -> ShuffleState:
        return ShuffleState(workers=self.workers, next_worker=0)

    def _route(self, hashes: KeyHashes, event_times_ms: np.ndarray) -> np.ndarray:
        n = len(event_times_ms)
        start = self.state.next_worker
        self.state.next_worker = (start + n) % self.workers
        return ((start + np.arange(n, dtype=np.int64)) % self.workers).astype(np.int32)
