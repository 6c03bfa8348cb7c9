r"""WIKIPEDIA_PAGEVIEWS(_BY_LANG) and WIKIPEDIA_CLICKSTREAM: Wikimedia dump lines.

Each message is one UTF-8 line (no trailing newline) of a public dump:

- pageviews (``pageviews-YYYYMMDD-HH``): ``<domain_code> <page_title> <count_views>
  <total_response_size>``, e.g. ``en.m Main_Page 3 0``. The domain code is a
  language (Zipf over ``LANGUAGES``), half the time with the mobile suffix
  ``.m``; titles are Zipf over ``page_titles(spec.keys)``; ``count_views`` is
  geometric (>= 1); the response size is 0, as in current dumps.
  WIKIPEDIA_PAGEVIEWS keys a line by page title, WIKIPEDIA_PAGEVIEWS_BY_LANG by
  language (the domain code before any ``.``); the count is ``count_views``.
- clickstream: ``<prev>\t<curr>\t<type>\t<n>`` with ``type`` in ``link`` /
  ``external`` / ``other``. ``curr`` is Zipf over the titles and is the key;
  ``n`` (>= 10, as the published dumps drop rarer pairs) is the count. ``prev``
  is a title for ``link`` rows and an ``other-*`` source otherwise.

The lines carry no time, so a tuple's event time is the message's Kafka
timestamp. Silver parses them with ``silver.parsers.pageviews`` and
``silver.parsers.clickstream``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bronze.datasets.base import DatasetSpec, TupleBatch
from bronze.datasets.chunked import ChunkedDataset
from bronze.datasets.sampling import draw_ranks, zipf_cdf
from bronze.datasets.vocabulary import (
    CLICKSTREAM_EXTERNAL_SOURCES,
    CLICKSTREAM_OTHER_SOURCES,
    LANGUAGES,
    page_titles,
)

__all__ = [
    "CLICK_TYPES",
    "WikipediaClickstreamDataset",
    "WikipediaPageviewsByLangDataset",
    "WikipediaPageviewsDataset",
]

CLICK_TYPES = ("link", "external", "other")
_CLICK_TYPE_SHARES = (0.6, 0.3, 0.1)
_MOBILE_SHARE = 0.5
_VIEWS_P = 0.35  # geometric count_views: mean ~2.9
_CLICKS_P = 0.05  # geometric clicks above the dump's floor of 10: mean ~29
_MIN_CLICKS = 10

_LANGUAGE_KEYS = np.array(LANGUAGES, dtype=object)
# Domain index = language index + len(LANGUAGES) * is_mobile.
_DOMAINS = LANGUAGES + tuple(f"{language}.m" for language in LANGUAGES)


@dataclass(frozen=True, slots=True)
class _PageviewDraw:
    languages: np.ndarray
    mobile: np.ndarray
    titles: np.ndarray
    views: np.ndarray


class WikipediaPageviewsDataset(ChunkedDataset[_PageviewDraw]):
    """Pageviews dump lines keyed by page title, counted by ``count_views``."""

    def __init__(self, spec: DatasetSpec, name: str = "WIKIPEDIA_PAGEVIEWS") -> None:
        """Bind the spec.

        Args:
            spec: what to generate (``keys`` titles, ``zipf_exponent`` skew).
            name: canonical name.
        """
        super().__init__(spec, name)

    def _draw(self, rng: np.random.Generator, first: int, timestamps: np.ndarray) -> _PageviewDraw:
        count, exponent = len(timestamps), self.spec.zipf_exponent
        return _PageviewDraw(
            languages=draw_ranks(rng, zipf_cdf(len(LANGUAGES), exponent), count),
            mobile=rng.random(count) < _MOBILE_SHARE,
            titles=draw_ranks(rng, zipf_cdf(self.spec.keys, exponent), count),
            views=rng.geometric(_VIEWS_P, count).astype(np.int64),
        )

    def _tuple_keys(self, draw: _PageviewDraw) -> np.ndarray:
        return page_titles(self.spec.keys)[draw.titles]

    def _chunk_tuples(self, draw: _PageviewDraw, timestamps: np.ndarray) -> tuple[TupleBatch, None]:
        return TupleBatch(self._tuple_keys(draw), draw.views, timestamps), None

    def _chunk_messages(
        self, draw: _PageviewDraw, timestamps: np.ndarray, first: int
    ) -> tuple[list[bytes], list[bytes]]:
        titles = page_titles(self.spec.keys)
        domains = (draw.languages + len(LANGUAGES) * draw.mobile).tolist()
        keys = [key.encode() for key in self._tuple_keys(draw).tolist()]
        payloads = [
            f"{_DOMAINS[domain]} {titles[title]} {views} 0".encode()
            for domain, title, views in zip(
                domains, draw.titles.tolist(), draw.views.tolist(), strict=True
            )
        ]
        return keys, payloads


class WikipediaPageviewsByLangDataset(WikipediaPageviewsDataset):
    """The same pageviews lines keyed by language (domain code before any ``.``)."""

    def __init__(self, spec: DatasetSpec) -> None:
        """Bind the spec."""
        super().__init__(spec, "WIKIPEDIA_PAGEVIEWS_BY_LANG")

    def _tuple_keys(self, draw: _PageviewDraw) -> np.ndarray:
        return _LANGUAGE_KEYS[draw.languages]


@dataclass(frozen=True, slots=True)
class _ClickDraw:
    current: np.ndarray
    types: np.ndarray
    previous_titles: np.ndarray
    sources: np.ndarray
    clicks: np.ndarray


class WikipediaClickstreamDataset(ChunkedDataset[_ClickDraw]):
    """Clickstream TSV rows keyed by the target page ``curr``, counted by ``n``."""

    def __init__(self, spec: DatasetSpec) -> None:
        """Bind the spec."""
        super().__init__(spec, "WIKIPEDIA_CLICKSTREAM")

    def _draw(self, rng: np.random.Generator, first: int, timestamps: np.ndarray) -> _ClickDraw:
        count = len(timestamps)
        cdf = zipf_cdf(self.spec.keys, self.spec.zipf_exponent)
        shares = np.cumsum(_CLICK_TYPE_SHARES)
        return _ClickDraw(
            current=draw_ranks(rng, cdf, count),
            types=np.searchsorted(shares, rng.random(count), side="right"),
            previous_titles=draw_ranks(rng, cdf, count),
            # One draw serves both "other-*" lists: index modulo the list's length.
            sources=rng.integers(0, 6, count),
            clicks=_MIN_CLICKS - 1 + rng.geometric(_CLICKS_P, count).astype(np.int64),
        )

    def _chunk_tuples(self, draw: _ClickDraw, timestamps: np.ndarray) -> tuple[TupleBatch, None]:
        return TupleBatch(page_titles(self.spec.keys)[draw.current], draw.clicks, timestamps), None

    def _chunk_messages(
        self, draw: _ClickDraw, timestamps: np.ndarray, first: int
    ) -> tuple[list[bytes], list[bytes]]:
        titles = page_titles(self.spec.keys)
        keys, payloads = [], []
        rows = zip(
            draw.current.tolist(), draw.types.tolist(), draw.previous_titles.tolist(),
            draw.sources.tolist(), draw.clicks.tolist(), strict=True,
        )  # fmt: skip
        for current, kind, previous, source, clicks in rows:
            if kind == 0:
                prev = titles[previous]
            elif kind == 1:
                prev = CLICKSTREAM_EXTERNAL_SOURCES[source % len(CLICKSTREAM_EXTERNAL_SOURCES)]
            else:
                prev = CLICKSTREAM_OTHER_SOURCES[source % len(CLICKSTREAM_OTHER_SOURCES)]
            key = titles[current]
            keys.append(key.encode())
            payloads.append(f"{prev}\t{key}\t{CLICK_TYPES[kind]}\t{clicks}".encode())
        return keys, payloads
