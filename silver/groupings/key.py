"""KEY: murmur3(key) mod W. Stateless, the baseline every other grouping beats."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from silver.groupings.base import Grouping, GroupingParams
from silver.groupings.hashing import KeyHashes

__all__ = ["KeyGrouping", "KeyParams", "KeyState"]


class KeyParams(GroupingParams):
    """KEY has no parameters."""


@dataclass
class KeyState:
    """KEY keeps no state beyond its worker count."""

    workers: int


class KeyGrouping(Grouping[KeyParams, KeyState]):
    """Every tuple of a key goes to one worker: no merge, no balance."""

    name = "KEY"
    params_type = KeyParams
    state_type = KeyState

    def initial_state(self) -> KeyState:
        return KeyState(workers=self.workers)

    def _route(self, hashes: KeyHashes, event_times_ms: np.ndarray) -> np.ndarray:
        return (hashes.home % np.uint32(self.workers)).astype(np.int32)
