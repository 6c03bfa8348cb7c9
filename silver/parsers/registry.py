"""Source types (the seed's dataset names, case-insensitive) -> message parsers.

A parser is ``parse(payload: bytes, kafka_timestamp_ms: int) -> [(key, count,
event_time_ms), ...]`` and raises :class:`ParseError` (with a short ``reason``)
for a message it cannot read. Parsers are plain module-level functions, so
Spark can pickle them into pandas UDFs.

- ``COUNTRY_SKEW_R{r}``, ``COUNTRY_HALF_SKEW_R{r}``, ``ZIPF``, ``ZIPF_SHIFTING``,
  ``WORDS_EN`` and the other word streams: keyed JSON (:mod:`silver.parsers.keyed_json`).
- ``TWITTER_TICKER``: cashtags of a JSON tweet; ``TWITTER_ELECTION``: its
  @mentions and #hashtags (:mod:`silver.parsers.json_tweets`).
- ``WIKIPEDIA_PAGEVIEWS`` (key = page title), ``WIKIPEDIA_PAGEVIEWS_BY_LANG``
  (key = language): pageviews lines (:mod:`silver.parsers.pageviews`).
- ``WIKIPEDIA_CLICKSTREAM``: clickstream TSV rows, key = ``curr``
  (:mod:`silver.parsers.clickstream`).

A topic that was not generated names its messages' *format* instead
(``keyed-json``, ``tweet-cashtags``, ...; :func:`source_type_for`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

import numpy as np

from bronze.datasets.words import WORD_DATASETS
from core.errors import DkgError
from silver.parsers.clickstream import parse_clickstream
from silver.parsers.common import ParseError, Parser
from silver.parsers.json_tweets import parse_election_tweet, parse_ticker_tweet
from silver.parsers.keyed_json import ParsedColumns, parse_keyed_json, parse_keyed_json_batch
from silver.parsers.pageviews import parse_pageviews, parse_pageviews_by_lang

__all__ = [
    "BatchParser",
    "ParseError",
    "Parser",
    "UnknownSourceError",
    "batch_parser_for",
    "formats",
    "parser_for",
    "source_type_for",
    "source_types",
]

_COUNTRY = re.compile(r"COUNTRY_(?:HALF_)?SKEW_R(?:0|[1-9][0-9]?|100)")
_PARSERS: dict[str, Parser] = {
    "ZIPF": parse_keyed_json,
    "ZIPF_SHIFTING": parse_keyed_json,
    "TWITTER_TICKER": parse_ticker_tweet,
    "TWITTER_ELECTION": parse_election_tweet,
    "WIKIPEDIA_PAGEVIEWS": parse_pageviews,
    "WIKIPEDIA_PAGEVIEWS_BY_LANG": parse_pageviews_by_lang,
    "WIKIPEDIA_CLICKSTREAM": parse_clickstream,
    **dict.fromkeys(WORD_DATASETS, parse_keyed_json),
}


BatchParser = Callable[[Sequence[bytes | None], np.ndarray], ParsedColumns]
"""One-tuple-per-message formats also parse whole batches, column-wise (Kafka times in ms)."""
_BATCH_PARSERS: dict[Parser, BatchParser] = {parse_keyed_json: parse_keyed_json_batch}


class UnknownSourceError(DkgError, ValueError):
    """A source type with no parser; the message lists the valid ones."""


def source_types() -> list[str]:
    """Every source type with a parser; the COUNTRY families appear as patterns."""
    return ["COUNTRY_SKEW_R{0..100}", "COUNTRY_HALF_SKEW_R{0..100}", *_PARSERS]


def parser_for(source_type: str) -> Parser:
    """The parser of a source type such as ``TWITTER_TICKER`` or ``country_skew_r80``.

    Raises:
        UnknownSourceError: no parser for that source type.
    """
    canonical = source_type.strip().upper()
    if _COUNTRY.fullmatch(canonical):
        return parse_keyed_json
    try:
        return _PARSERS[canonical]
    except KeyError:
        raise UnknownSourceError(
            f"no parser for source type {source_type!r}; choose from {', '.join(source_types())}"
        ) from None


_FORMATS = {"keyed-json": "ZIPF", "tweet-cashtags": "TWITTER_TICKER",
            "tweet-mentions": "TWITTER_ELECTION", "pageviews": "WIKIPEDIA_PAGEVIEWS",
            "pageviews-by-lang": "WIKIPEDIA_PAGEVIEWS_BY_LANG",
            "clickstream": "WIKIPEDIA_CLICKSTREAM"}  # fmt: skip
"""Message formats by name, each as a source type that has its parser."""


def formats() -> list[str]:
    """The message formats ``dkg run --format`` reads (source types are accepted too)."""
    return list(_FORMATS)


def source_type_for(message_format: str) -> str:
    """The source type whose parser reads ``message_format`` (a format or a source type).

    Raises:
        UnknownSourceError: neither a format nor a source type with a parser.
    """
    name = message_format.strip()
    if name.lower() in _FORMATS:
        return _FORMATS[name.lower()]
    try:
        parser_for(name)
    except UnknownSourceError:
        raise UnknownSourceError(
            f"no parser for format {message_format!r}; choose from {', '.join(formats())} "
            f"or a source type ({', '.join(source_types())})"
        ) from None
    return name.upper()


def batch_parser_for(source_type: str) -> BatchParser | None:
    """The batch parser of a one-tuple-per-message source type, or None."""
    return _BATCH_PARSERS.get(parser_for(source_type))
