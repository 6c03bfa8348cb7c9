"""W_CHOICES: heavy keys may use every worker (Nasir et al., ICDE 2016).

"When two choices are not enough": a SpaceSaving summary estimates each key's
frequency; a key whose estimated share of the splitter's stream is at least
``theta = heavy_threshold_factor / W`` goes to the least-loaded of all W
workers, every other key is routed as PARTIAL_KEY.

The summary is sized from theta (``capacity = 1 / (theta * error_ratio)``) so its
over-estimate stays a fraction of the threshold. A fixed small summary (say 100
counters) with W >= 21 has an error above theta: every key then looks heavy and
the grouping degenerates into shuffle.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np
from pydantic import Field

from silver.groupings.base import Grouping, GroupingParams, HotKey
from silver.groupings.hashing import KeyHashes
from silver.groupings.partial_key import two_candidates
from silver.groupings.space_saving import EMPTY, SpaceSavingArrays, capacity_for, ss_offer

__all__ = ["WChoicesGrouping", "WChoicesParams", "WChoicesState"]


class WChoicesParams(GroupingParams):
    """Parameters of W_CHOICES.

    Attributes:
        heavy_threshold_factor: a key is heavy when its share >= factor / W.
        error_ratio: summary error as a fraction of the threshold (sizes it).
        min_heavy_count: a key needs this many tuples before it can be heavy;
            early in a stream every key's share looks large.
    """

    heavy_threshold_factor: float = Field(default=0.2, gt=0, le=1)
    error_ratio: float = Field(default=0.25, gt=0, le=1)
    min_heavy_count: int = Field(default=10, ge=1)


@dataclass
class WChoicesState:
    """Per-worker tuple counts, the stream length and the frequency summary."""

    workers: int
    sent: np.ndarray
    total: int
    sk_fingerprints: np.ndarray
    sk_counts: np.ndarray
    sk_errors: np.ndarray
    sk_heap: np.ndarray
    sk_heap_pos: np.ndarray
    sk_index: np.ndarray
    # Names of the heavy keys, for reporting only (routing never reads them); in
    # the state so that a grouping restored from a snapshot still names its keys.
    name_fps: np.ndarray
    names: np.ndarray


@numba.njit(cache=True, nogil=True)
def _route_w_choices(
    fingerprints, first, second, theta, min_count, sent, total,
    sk_fp, sk_counts, sk_errors, sk_heap, sk_heap_pos, sk_index,
):  # fmt: skip
    workers = sent.shape[0]
    out = np.empty(first.shape[0], dtype=np.int32)
    for i in range(first.shape[0]):
        total += 1
        slot, _ = ss_offer(
            fingerprints[i], 1.0, sk_fp, sk_counts, sk_errors, sk_heap, sk_heap_pos, sk_index
        )
        count = sk_counts[slot]
        if count >= theta * total and count >= min_count:
            chosen = 0
            for w in range(1, workers):
                if sent[w] < sent[chosen]:
                    chosen = w
        else:
            a = first[i]
            b = second[i]
            chosen = b if sent[b] < sent[a] else a
        sent[chosen] += 1
        out[i] = chosen
    return out, total


class WChoicesGrouping(Grouping[WChoicesParams, WChoicesState]):
    """Heavy keys to the least-loaded worker overall, the rest as PARTIAL_KEY."""

    name = "W_CHOICES"
    params_type = WChoicesParams
    state_type = WChoicesState

    def __init__(
        self, workers: int, params: WChoicesParams | None = None, state: WChoicesState | None = None
    ) -> None:
        super().__init__(workers, params, state)

    @property
    def theta(self) -> float:
        """Heavy threshold as a share of the stream."""
        return self.params.heavy_threshold_factor / self.workers

    def initial_state(self) -> WChoicesState:
        sketch = SpaceSavingArrays.empty(capacity_for(self.theta, self.params.error_ratio))
        return WChoicesState(
            workers=self.workers,
            sent=np.zeros(self.workers, dtype=np.int64),
            total=0,
            sk_fingerprints=sketch.fingerprints,
            sk_counts=sketch.counts,
            sk_errors=sketch.errors,
            sk_heap=sketch.heap,
            sk_heap_pos=sketch.heap_pos,
            sk_index=sketch.index,
            name_fps=np.zeros(0, dtype=np.int64),
            names=np.zeros(0, dtype="<U1"),
        )

    def _route(self, hashes: KeyHashes, event_times_ms: np.ndarray) -> np.ndarray:
        s = self.state
        first, second = two_candidates(hashes.home, hashes.alt, self.workers)
        out, s.total = _route_w_choices(
            hashes.fingerprint, first, second, self.theta, self.params.min_heavy_count, s.sent, s.total,
            s.sk_fingerprints, s.sk_counts, s.sk_errors, s.sk_heap, s.sk_heap_pos, s.sk_index,
        )  # fmt: skip
        self._remember_names(hashes)
        return out

    def _remember_names(self, hashes: KeyHashes) -> None:
        # Keep exactly the heavy keys' names: the set is small and the snapshot stays so.
        s = self.state
        known = self._names()
        heavy = [int(fp) for fp in s.sk_fingerprints[self._heavy_slots()]]
        missing = [fp for fp in heavy if fp not in known]
        found = hashes.names_of(np.array(missing, dtype=np.int64)) if missing else []
        known.update(
            (fp, name) for fp, name in zip(missing, found, strict=True) if name is not None
        )
        kept = [fp for fp in heavy if fp in known]
        s.name_fps = np.array(kept, dtype=np.int64)
        s.names = np.array([known[fp] for fp in kept], dtype=str) if kept else np.zeros(0, "<U1")

    def _names(self) -> dict[int, str]:
        return dict(zip(self.state.name_fps.tolist(), self.state.names.tolist(), strict=True))

    def _heavy_slots(self) -> np.ndarray:
        s = self.state
        used = s.sk_fingerprints != EMPTY
        counts = s.sk_counts
        heavy = (counts >= self.theta * max(s.total, 1)) & (counts >= self.params.min_heavy_count)
        return np.flatnonzero(used & heavy)

    def hot_keys(self) -> list[HotKey]:
        """Heavy keys: each may use all W workers."""
        s = self.state
        names = self._names()
        return [
            HotKey(
                key=names.get(int(s.sk_fingerprints[slot]), f"#{int(s.sk_fingerprints[slot]):x}"),
                pool_size=self.workers,
                workers=tuple(range(self.workers)),
                estimated_share=float(s.sk_counts[slot] / max(s.total, 1)),
                reason=f"estimated share >= {self.theta:.4g} (heavy)",
            )
            for slot in self._heavy_slots()
        ]
