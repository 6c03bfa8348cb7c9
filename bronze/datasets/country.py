"""COUNTRY_SKEW_R{r} and COUNTRY_HALF_SKEW_R{r}: country names with one hot country.

In COUNTRY_SKEW_R{r} each message is, with probability ``r / 100``, the hot
country (``HOT_COUNTRY``), and otherwise uniform over the other countries: R0
never sends the hot country, R100 sends nothing else. COUNTRY_HALF_SKEW_R{r}
(the seed's COUNTRY_HALF_SKEW_R80) is skewed like R{r} for its first
``messages // 2`` messages and uniform over all countries afterwards, so a
grouping must cope with the skew going away. Messages are keyed JSON
(:mod:`bronze.datasets.keyed`).
"""

from __future__ import annotations

import numpy as np

from bronze.datasets.base import DatasetSpec
from bronze.datasets.keyed import KeyedDataset
from bronze.datasets.vocabulary import COUNTRIES

__all__ = ["HOT_COUNTRY", "CountryHalfSkewDataset", "CountrySkewDataset"]

HOT_COUNTRY = COUNTRIES[0]
_COUNTRY_ARRAY = np.array(COUNTRIES, dtype=object)


class CountrySkewDataset(KeyedDataset):
    """``skew_percent`` % of messages name the hot country, the rest another one."""

    def __init__(self, spec: DatasetSpec, skew_percent: int, name: str | None = None) -> None:
        """Bind the spec.

        Args:
            spec: what to generate.
            skew_percent: share of hot-country messages, 0..100.
            name: canonical name; defaults to ``COUNTRY_SKEW_R{skew_percent}``.
        """
        if not 0 <= skew_percent <= 100:
            raise ValueError(f"skew_percent must be within 0..100, got {skew_percent}")
        super().__init__(spec, name or f"COUNTRY_SKEW_R{skew_percent}")
        self.skew_percent = skew_percent

    def _vocabulary(self) -> np.ndarray:
        return _COUNTRY_ARRAY

    def _draw(self, rng: np.random.Generator, first: int, timestamps: np.ndarray) -> np.ndarray:
        count = len(timestamps)
        hot = rng.random(count) < self.skew_percent / 100.0
        # Index 0 is the hot country, so "the others" are indices 1..N-1.
        others = rng.integers(1, len(COUNTRIES), count)
        return np.where(hot, 0, others)


class CountryHalfSkewDataset(CountrySkewDataset):
    """Skewed like COUNTRY_SKEW_R{r} in the first half, uniform over all countries after."""

    def __init__(self, spec: DatasetSpec, skew_percent: int) -> None:
        """Bind the spec.

        Args:
            spec: what to generate.
            skew_percent: hot-country share of the first half, 0..100.
        """
        super().__init__(spec, skew_percent, f"COUNTRY_HALF_SKEW_R{skew_percent}")

    def _draw(self, rng: np.random.Generator, first: int, timestamps: np.ndarray) -> np.ndarray:
        skewed = super()._draw(rng, first, timestamps)
        uniform = rng.integers(0, len(COUNTRIES), len(timestamps))
        in_first_half = np.arange(first, first + len(timestamps)) < self.spec.messages // 2
        return np.where(in_first_half, skewed, uniform)
