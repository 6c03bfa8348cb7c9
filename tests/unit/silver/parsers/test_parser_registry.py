"""Source type -> parser: every dataset name has one, unknown names are listed."""

from __future__ import annotations

import pickle

import pytest

from bronze.datasets.registry import dataset_names
from silver.parsers.clickstream import parse_clickstream
from silver.parsers.json_tweets import parse_election_tweet, parse_ticker_tweet
from silver.parsers.keyed_json import parse_keyed_json
from silver.parsers.pageviews import parse_pageviews, parse_pageviews_by_lang
from silver.parsers.registry import ParseError, UnknownSourceError, parser_for, source_types


@pytest.mark.parametrize(("source_type", "parser"), [
    ("COUNTRY_SKEW_R0", parse_keyed_json),
    ("country_skew_r80", parse_keyed_json),
    ("COUNTRY_SKEW_R100", parse_keyed_json),
    ("COUNTRY_HALF_SKEW_R80", parse_keyed_json),
    ("ZIPF", parse_keyed_json),
    ("zipf_shifting", parse_keyed_json),
    ("TWITTER_TICKER", parse_ticker_tweet),
    ("Twitter_Election", parse_election_tweet),
    ("WIKIPEDIA_PAGEVIEWS", parse_pageviews),
    ("WIKIPEDIA_PAGEVIEWS_BY_LANG", parse_pageviews_by_lang),
    (" WIKIPEDIA_CLICKSTREAM ", parse_clickstream),
])  # fmt: skip
def test_parser_for(source_type, parser):
    assert parser_for(source_type) is parser
    # Spark ships parsers to executors by pickling them.
    assert pickle.loads(pickle.dumps(parser_for(source_type))) is parser  # noqa: S301 (own data)


def test_every_dataset_family_has_a_parser():
    assert source_types() == dataset_names()


@pytest.mark.parametrize("source_type", ["", "CSV", "COUNTRY_SKEW_R101", "ZIPF2"])
def test_unknown_source_type(source_type):
    with pytest.raises(UnknownSourceError) as caught:
        parser_for(source_type)
    assert isinstance(caught.value, ValueError)
    assert "TWITTER_TICKER" in str(caught.value)
    assert "COUNTRY_SKEW_R{0..100}" in str(caught.value)


def test_parse_error_is_exported():
    assert issubclass(ParseError, ValueError)
