"""ZIPF and ZIPF_SHIFTING: synthetic keys with Zipf-distributed popularity.

Keys are ``key-<rank>`` for ranks ``1..spec.keys``; a message has rank ``k`` with
probability proportional to ``k ** -spec.zipf_exponent`` (inverse-CDF sampling).
In ZIPF, ``key-1`` is the hottest key for the whole run. ZIPF_SHIFTING cuts
event time into intervals of ``spec.shift_interval_s`` seconds from
``spec.start_ms`` and, from the second interval on, maps ranks to keys through
a seeded permutation per interval, so the hot set moves while its shape stays.
Messages are keyed JSON (:mod:`bronze.datasets.keyed`).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from bronze.datasets.keyed import KeyedDataset
from bronze.datasets.sampling import PERMUTATION_STREAM, chunk_rng, draw_ranks, zipf_cdf

__all__ = ["ZipfDataset", "ZipfShiftingDataset", "zipf_keys"]


@lru_cache(maxsize=4)
def zipf_keys(count: int) -> np.ndarray:
    """``key-1 .. key-<count>`` as an object array (cached; treat as read-only)."""
    return np.array([f"key-{rank}" for rank in range(1, count + 1)], dtype=object)


@lru_cache(maxsize=8)
def _interval_permutation(seed: int, interval: int, count: int) -> np.ndarray:
    # Interval 0 keeps rank k on key-k, so a shifting run starts out like ZIPF.
    if interval == 0:
        return np.arange(count, dtype=np.int64)
    return chunk_rng(seed, PERMUTATION_STREAM, interval).permutation(count)


class ZipfDataset(KeyedDataset):
    """``key-<rank>`` with ``P(rank) ∝ rank ** -zipf_exponent``; ``key-1`` hottest."""

    def _vocabulary(self) -> np.ndarray:
        return zipf_keys(self.spec.keys)

    def _draw(self, rng: np.random.Generator, first: int, timestamps: np.ndarray) -> np.ndarray:
        return draw_ranks(rng, zipf_cdf(self.spec.keys, self.spec.zipf_exponent), len(timestamps))


class ZipfShiftingDataset(ZipfDataset):
    """ZIPF whose rank -> key mapping is re-permuted every ``shift_interval_s`` of event time."""

    def interval_of(self, timestamps_ms: np.ndarray) -> np.ndarray:
        """The shift interval (0, 1, ...) of each event time."""
        interval_ms = self.spec.shift_interval_s * 1000.0
        return np.floor((timestamps_ms - self.spec.start_ms) / interval_ms).astype(np.int64)

    def _draw(self, rng: np.random.Generator, first: int, timestamps: np.ndarray) -> np.ndarray:
        ranks = super()._draw(rng, first, timestamps)
        intervals = self.interval_of(timestamps)
        keys = np.empty_like(ranks)
        # A chunk usually lies within one interval; loop over the few it touches.
        for interval in np.unique(intervals).tolist():
            rows = intervals == interval
            permutation = _interval_permutation(self.spec.seed, interval, self.spec.keys)
            keys[rows] = permutation[ranks[rows]]
        return keys
