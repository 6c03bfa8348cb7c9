"""Dataset names (the seed's source types, case-insensitive) -> generators.

``make_dataset`` is the one way other code builds a dataset from a spec; the
families with a skew parameter in their name (``COUNTRY_SKEW_R{r}``,
``COUNTRY_HALF_SKEW_R{r}``) accept any integer ``r`` in 0..100 written
without leading zeros.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from bronze.datasets.base import Dataset, DatasetSpec
from bronze.datasets.country import CountryHalfSkewDataset, CountrySkewDataset
from bronze.datasets.twitter import TwitterElectionDataset, TwitterTickerDataset
from bronze.datasets.wikipedia import (
    WikipediaClickstreamDataset,
    WikipediaPageviewsByLangDataset,
    WikipediaPageviewsDataset,
)
from bronze.datasets.words import WORD_DATASETS, WordsDataset
from bronze.datasets.zipf import ZipfDataset, ZipfShiftingDataset
from core.errors import DkgError

__all__ = ["UnknownDatasetError", "canonical_name", "dataset_names", "make_dataset"]

_PERCENT = r"(0|[1-9][0-9]?|100)"
_PATTERNS: tuple[tuple[re.Pattern[str], str, Callable[[DatasetSpec, int], Dataset]], ...] = (
    (re.compile(rf"COUNTRY_SKEW_R{_PERCENT}"), "COUNTRY_SKEW_R{0..100}", CountrySkewDataset),
    (
        re.compile(rf"COUNTRY_HALF_SKEW_R{_PERCENT}"),
        "COUNTRY_HALF_SKEW_R{0..100}",
        CountryHalfSkewDataset,
    ),
)
_FIXED: dict[str, Callable[[DatasetSpec], Dataset]] = {
    "ZIPF": lambda spec: ZipfDataset(spec, "ZIPF"),
    "ZIPF_SHIFTING": lambda spec: ZipfShiftingDataset(spec, "ZIPF_SHIFTING"),
    "TWITTER_TICKER": lambda spec: TwitterTickerDataset(spec, "TWITTER_TICKER"),
    "TWITTER_ELECTION": lambda spec: TwitterElectionDataset(spec, "TWITTER_ELECTION"),
    "WIKIPEDIA_PAGEVIEWS": WikipediaPageviewsDataset,
    "WIKIPEDIA_PAGEVIEWS_BY_LANG": WikipediaPageviewsByLangDataset,
    "WIKIPEDIA_CLICKSTREAM": WikipediaClickstreamDataset,
    **{name: lambda spec, name=name: WordsDataset(spec, name) for name in WORD_DATASETS},
}


class UnknownDatasetError(DkgError, ValueError):
    """A dataset name that no generator answers to; the message lists the valid ones."""


def dataset_names() -> list[str]:
    """Every dataset family; parameterized families appear as patterns (``..._R{0..100}``)."""
    return [pattern for _, pattern, _ in _PATTERNS] + list(_FIXED)


def canonical_name(name: str) -> str:
    """The seed's spelling of a dataset name (``zipf`` -> ``ZIPF``).

    Raises:
        UnknownDatasetError: the name matches no dataset.
    """
    canonical = name.strip().upper()
    if canonical in _FIXED or any(p.fullmatch(canonical) for p, _, _ in _PATTERNS):
        return canonical
    raise UnknownDatasetError(f"unknown dataset {name!r}; choose from {', '.join(dataset_names())}")


def make_dataset(spec: DatasetSpec) -> Dataset:
    """The generator named by ``spec.name``.

    Raises:
        UnknownDatasetError: ``spec.name`` matches no dataset.
    """
    canonical = canonical_name(spec.name)
    for pattern, _, factory in _PATTERNS:
        match = pattern.fullmatch(canonical)
        if match is not None:
            return factory(spec, int(match.group(1)))
    return _FIXED[canonical](spec)
