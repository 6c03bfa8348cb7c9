"""PARTIAL_KEY: the power of two choices with key splitting (Nasir et al.).

Each key has two candidate workers from two independently seeded murmur3
hashes, forced distinct; a tuple goes to the candidate this splitter has sent
fewer tuples to (local load estimation: splitters never coordinate).
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np

from silver.groupings.base import Grouping, GroupingParams
from silver.groupings.hashing import KeyHashes

__all__ = ["PartialKeyGrouping", "PartialKeyParams", "PartialKeyState", "two_candidates"]


class PartialKeyParams(GroupingParams):
    """PARTIAL_KEY has no parameters beyond the worker count."""


@dataclass
class PartialKeyState:
    """Tuples this splitter has sent to each worker."""

    workers: int
    sent: np.ndarray


def two_candidates(
    home: np.ndarray, alt: np.ndarray, workers: int
) -> tuple[np.ndarray, np.ndarray]:
    """The two distinct candidate workers of each key (equal only when W == 1)."""
    first = (home % np.uint32(workers)).astype(np.int64)
    if workers == 1:
        return first, first
    offset = 1 + (alt % np.uint32(workers - 1)).astype(np.int64)
    return first, (first + offset) % workers


@numba.njit(cache=True, nogil=True)
def _least_loaded_of_two(first: np.ndarray, second: np.ndarray, sent: np.ndarray) -> np.ndarray:
    out = np.empty(first.shape[0], dtype=np.int32)
    for i in range(first.shape[0]):
        a = first[i]
        b = second[i]
        chosen = b if sent[b] < sent[a] else a
        sent[chosen] += 1
        out[i] = chosen
    return out


class PartialKeyGrouping(Grouping[PartialKeyParams, PartialKeyState]):
    """At most two workers per key; the less loaded one wins (ties: the first)."""

    name = "PARTIAL_KEY"
    params_type = PartialKeyParams
    state_type = PartialKeyState

    def initial_state(self) -> PartialKeyState:
        return PartialKeyState(workers=self.workers, sent=np.zeros(self.workers, dtype=np.int64))

    def _route(self, hashes: KeyHashes, event_times_ms: np.ndarray) -> np.ndarray:
        first, second = two_candidates(hashes.home, hashes.alt, self.workers)
        return _least_loaded_of_two(first, second, self.state.sent)
