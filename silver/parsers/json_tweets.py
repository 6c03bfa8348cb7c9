"""Parsers of JSON tweets (TWITTER_TICKER, TWITTER_ELECTION).

A tweet is a JSON object with at least ``text`` (str) and ``created_at`` (event
time, integer epoch milliseconds). Its keys are tokens of the text, distinct,
in order of first appearance, each one tuple with count 1:

- tickers: cashtags ``$AAPL`` -> ``AAPL`` (upper case, no ``$``); ``$100`` and
  ``US$5`` are not cashtags.
- election: mentions and hashtags ``@GovAvaMorgan`` / ``#Debate`` ->
  ``@govavamorgan`` / ``#debate`` (lower case, sigil kept so a candidate and a
  hashtag never share a key).
"""

from __future__ import annotations

import re

from silver.parsers.common import (
    ParsedTuple,
    ParseError,
    check_event_time,
    check_key,
    load_json_object,
)

__all__ = ["parse_election_tweet", "parse_ticker_tweet"]

_CASHTAG = re.compile(r"(?<![\w$])\$([A-Za-z]{1,6}(?:\.[A-Za-z])?)\b")
_MENTION_OR_HASHTAG = re.compile(r"(?<![\w@#])[@#]\w+")


def _text_and_time(payload: bytes, kafka_timestamp_ms: int) -> tuple[str, int]:
    tweet = load_json_object(payload)
    for field in ("text", "created_at"):
        if field not in tweet:
            raise ParseError(f"missing_field:{field}")
    text = tweet["text"]
    if not isinstance(text, str):
        raise ParseError("bad_field:text", type(text).__name__)
    return text, check_event_time(tweet["created_at"], kafka_timestamp_ms)


def _tuples(keys: list[str], event_time: int) -> list[ParsedTuple]:
    if not keys:
        raise ParseError("no_keys")
    # dict.fromkeys keeps first-appearance order while dropping repeats.
    return [(check_key(key), 1, event_time) for key in dict.fromkeys(keys)]


def parse_ticker_tweet(payload: bytes, kafka_timestamp_ms: int) -> list[ParsedTuple]:
    """One ``(SYMBOL, 1, created_at)`` tuple per distinct cashtag.

    Raises:
        ParseError: ``not_utf8``, ``not_json``, ``not_object``, ``missing_field:text``,
            ``missing_field:created_at``, ``bad_field:text``, ``bad_timestamp``,
            ``timestamp_out_of_range`` or ``no_keys``.
    """
    text, event_time = _text_and_time(payload, kafka_timestamp_ms)
    return _tuples([symbol.upper() for symbol in _CASHTAG.findall(text)], event_time)


def parse_election_tweet(payload: bytes, kafka_timestamp_ms: int) -> list[ParsedTuple]:
    """One ``(@mention or #hashtag, 1, created_at)`` tuple per distinct token.

    Raises:
        ParseError: as :func:`parse_ticker_tweet`, plus ``key_too_long``.
    """
    text, event_time = _text_and_time(payload, kafka_timestamp_ms)
    return _tuples([token.lower() for token in _MENTION_OR_HASHTAG.findall(text)], event_time)
