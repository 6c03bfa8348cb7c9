"""The generators' skew: hot shares, uniformity, Zipf head, shifting hot sets."""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pytest

from bronze.datasets.base import DatasetSpec
from bronze.datasets.country import HOT_COUNTRY
from bronze.datasets.registry import make_dataset
from bronze.datasets.vocabulary import COUNTRIES
from bronze.datasets.zipf import ZipfShiftingDataset
from silver.parsers.registry import parser_for


def _keys(name: str, **fields: object) -> np.ndarray:
    batches = make_dataset(DatasetSpec(name=name, **fields)).tuples()
    return np.concatenate([batch.keys for batch in batches])


def _share(keys: np.ndarray, key: str) -> float:
    return float(np.mean(keys == key))


@pytest.mark.parametrize(("name", "hot_share"), [
    ("COUNTRY_SKEW_R80", 0.80),
    ("COUNTRY_SKEW_R50", 0.50),
    ("country_skew_r5", 0.05),
])  # fmt: skip
def test_country_hot_share(name, hot_share):
    keys = _keys(name, messages=100_000)
    assert _share(keys, HOT_COUNTRY) == pytest.approx(hot_share, abs=0.01)
    # The rest spreads over every other country.
    assert set(keys.tolist()) == set(COUNTRIES)


def test_country_r0_is_uniform_over_the_other_countries():
    keys = _keys("COUNTRY_SKEW_R0", messages=100_000)
    counts = Counter(keys.tolist())
    assert HOT_COUNTRY not in counts
    assert len(counts) == len(COUNTRIES) - 1
    expected = 100_000 / (len(COUNTRIES) - 1)
    assert max(abs(c - expected) for c in counts.values()) < 0.15 * expected


def test_country_r100_is_one_key():
    assert set(_keys("COUNTRY_SKEW_R100", messages=5_000).tolist()) == {HOT_COUNTRY}


def test_country_half_skew_halves():
    keys = _keys("COUNTRY_HALF_SKEW_R80", messages=100_001)
    first, second = keys[: 100_001 // 2], keys[100_001 // 2 :]
    assert _share(first, HOT_COUNTRY) == pytest.approx(0.80, abs=0.01)
    assert _share(second, HOT_COUNTRY) == pytest.approx(1 / len(COUNTRIES), abs=0.005)
    assert len(set(second.tolist())) == len(COUNTRIES)


def test_zipf_head_share_matches_harmonic_number():
    keys, exponent = 10_000, 1.4
    drawn = _keys("ZIPF", messages=200_000, keys=keys, zipf_exponent=exponent)
    harmonic = float(np.sum(np.arange(1, keys + 1, dtype=np.float64) ** -exponent))
    assert _share(drawn, "key-1") == pytest.approx(1 / harmonic, abs=0.005)
    assert _share(drawn, "key-2") == pytest.approx(2**-exponent / harmonic, abs=0.005)
    assert set(drawn.tolist()) <= {f"key-{rank}" for rank in range(1, keys + 1)}


def test_zipf_exponent_and_keys_are_honoured():
    drawn = _keys("ZIPF", messages=20_000, keys=10, zipf_exponent=0.5)
    assert set(drawn.tolist()) == {f"key-{rank}" for rank in range(1, 11)}
    assert _share(drawn, "key-1") < 0.25


def test_zipf_shifting_moves_the_hot_key():
    spec = DatasetSpec(name="ZIPF_SHIFTING", messages=60_000, rate=2000, shift_interval_s=10)
    dataset = make_dataset(spec)
    assert isinstance(dataset, ZipfShiftingDataset)
    batches = list(dataset.tuples())
    keys = np.concatenate([b.keys for b in batches])
    intervals = dataset.interval_of(np.concatenate([b.event_times_ms for b in batches]))
    assert sorted(set(intervals.tolist())) == [0, 1, 2]
    hottest = [Counter(keys[intervals == i].tolist()).most_common(1)[0][0] for i in (0, 1, 2)]
    assert hottest[0] == "key-1"
    assert len(set(hottest)) == 3
    # The shape stays: each interval's hottest key holds about the Zipf head share.
    for interval, key in enumerate(hottest):
        assert _share(keys[intervals == interval], key) == pytest.approx(0.336, abs=0.02)


def test_ticker_tweets_have_one_to_three_distinct_cashtags():
    dataset = make_dataset(DatasetSpec(name="TWITTER_TICKER", messages=30_000))
    parse = parser_for("TWITTER_TICKER")
    sizes, keys = Counter(), Counter()
    for batch in dataset.messages():
        for payload, stamp in zip(batch.payloads, batch.timestamps_ms.tolist(), strict=True):
            tweet_keys = [key for key, _, _ in parse(payload, stamp)]
            # The parser drops repeats, so compare with the raw text's cashtags.
            assert json.loads(payload)["text"].count("$") == len(tweet_keys)
            sizes[len(tweet_keys)] += 1
            keys.update(tweet_keys)
    assert sizes[1] / 30_000 == pytest.approx(0.6, abs=0.02)
    assert sizes[2] / 30_000 == pytest.approx(0.3, abs=0.02)
    assert sizes[3] / 30_000 == pytest.approx(0.1, abs=0.02)
    assert keys.most_common(1)[0][0] == "AAPL"


def test_election_tweets_lead_with_a_skewed_candidate():
    keys = _keys("TWITTER_ELECTION", messages=30_000)
    candidates = [k for k in keys.tolist() if k.startswith("@")]
    hashtags = [k for k in keys.tolist() if k.startswith("#")]
    assert len(candidates) == 30_000
    assert len(hashtags) / 30_000 == pytest.approx(0.45 + 2 * 0.25, abs=0.03)
    assert Counter(candidates).most_common(1)[0][0] == "@govavamorgan"


@pytest.mark.parametrize(("name", "hottest"), [
    ("WIKIPEDIA_PAGEVIEWS", "Main_Page"),
    ("WIKIPEDIA_PAGEVIEWS_BY_LANG", "en"),
    ("WIKIPEDIA_CLICKSTREAM", "Main_Page"),
])  # fmt: skip
def test_wikipedia_hottest_key(name, hottest):
    batches = list(make_dataset(DatasetSpec(name=name, messages=20_000)).tuples())
    keys = np.concatenate([b.keys for b in batches])
    counts = np.concatenate([b.counts for b in batches])
    assert Counter(keys.tolist()).most_common(1)[0][0] == hottest
    assert counts.min() >= (10 if name == "WIKIPEDIA_CLICKSTREAM" else 1)
