"""Dataset names: the seed's spellings, case-insensitive, with a helpful error."""

from __future__ import annotations

import pytest

from bronze.datasets.base import DatasetSpec
from bronze.datasets.country import CountryHalfSkewDataset, CountrySkewDataset
from bronze.datasets.registry import UnknownDatasetError, dataset_names, make_dataset
from bronze.datasets.twitter import TwitterTickerDataset
from bronze.datasets.wikipedia import WikipediaPageviewsByLangDataset
from bronze.datasets.words import WordsDataset


@pytest.mark.parametrize(("name", "canonical", "cls"), [
    ("ZIPF", "ZIPF", None),
    ("zipf_shifting", "ZIPF_SHIFTING", None),
    (" Twitter_Ticker ", "TWITTER_TICKER", TwitterTickerDataset),
    ("wikipedia_pageviews_by_lang", "WIKIPEDIA_PAGEVIEWS_BY_LANG", WikipediaPageviewsByLangDataset),
    ("country_skew_r0", "COUNTRY_SKEW_R0", CountrySkewDataset),
    ("COUNTRY_SKEW_R7", "COUNTRY_SKEW_R7", CountrySkewDataset),
    ("COUNTRY_SKEW_R100", "COUNTRY_SKEW_R100", CountrySkewDataset),
    ("COUNTRY_HALF_SKEW_R80", "COUNTRY_HALF_SKEW_R80", CountryHalfSkewDataset),
    ("country_half_skew_r33", "COUNTRY_HALF_SKEW_R33", CountryHalfSkewDataset),
    ("words_en", "WORDS_EN", WordsDataset),
    ("Words_Ja", "WORDS_JA", WordsDataset),
])  # fmt: skip
def test_names_are_case_insensitive(name, canonical, cls):
    dataset = make_dataset(DatasetSpec(name=name, messages=1))
    assert dataset.name == canonical
    if cls is not None:
        assert isinstance(dataset, cls)


def test_country_skew_parameter():
    assert make_dataset(DatasetSpec(name="COUNTRY_SKEW_R42")).skew_percent == 42


@pytest.mark.parametrize("name", [
    "", "ZIPFF", "COUNTRY_SKEW_R101", "COUNTRY_SKEW_R080", "COUNTRY_SKEW_R", "COUNTRY_SKEW_R-1",
    "COUNTRY_HALF_SKEW", "TWITTER",
])  # fmt: skip
def test_unknown_names_list_the_valid_ones(name):
    with pytest.raises(UnknownDatasetError) as caught:
        make_dataset(DatasetSpec(name=name))
    assert isinstance(caught.value, ValueError)
    message = str(caught.value)
    assert repr(name) in message
    for valid in dataset_names():
        assert valid in message


def test_dataset_names():
    assert dataset_names() == [
        "COUNTRY_SKEW_R{0..100}",
        "COUNTRY_HALF_SKEW_R{0..100}",
        "ZIPF",
        "ZIPF_SHIFTING",
        "TWITTER_TICKER",
        "TWITTER_ELECTION",
        "WIKIPEDIA_PAGEVIEWS",
        "WIKIPEDIA_PAGEVIEWS_BY_LANG",
        "WIKIPEDIA_CLICKSTREAM",
        "WORDS_EN",
        "WORDS_DE",
        "WORDS_ES",
        "WORDS_FR",
        "WORDS_RU",
        "WORDS_JA",
    ]
