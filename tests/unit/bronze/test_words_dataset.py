"""WORDS_*: word streams drawn from wordfreq's real frequencies, seeded and replayable."""

from __future__ import annotations

import json

import numpy as np
import pytest
import wordfreq

from bronze.datasets.base import DatasetSpec
from bronze.datasets.registry import make_dataset
from silver.parsers.registry import parser_for


def _tuples(name: str, messages: int, seed: int = 1, keys: int = 2000) -> np.ndarray:
    spec = DatasetSpec(name=name, messages=messages, seed=seed, keys=keys)
    return np.concatenate([b.keys for b in make_dataset(spec).tuples(batch_size=7_000)])


@pytest.mark.parametrize("name", ["WORDS_EN", "WORDS_DE", "WORDS_JA"])
def test_same_seed_same_stream_other_seed_other_stream(name):
    first, again = _tuples(name, 20_000), _tuples(name, 20_000)
    assert np.array_equal(first, again)
    assert not np.array_equal(first, _tuples(name, 20_000, seed=2))


@pytest.mark.parametrize(("name", "language"), [("WORDS_EN", "en"), ("WORDS_FR", "fr")])
def test_word_shares_follow_wordfreq(name, language):
    keys = 2000
    words = wordfreq.top_n_list(language, keys, wordlist="best")
    expected = np.array([wordfreq.word_frequency(w, language, wordlist="best") for w in words])
    expected /= expected.sum()
    stream = _tuples(name, 200_000, keys=keys)
    assert set(stream.tolist()) <= set(words)
    counts = np.array([np.count_nonzero(stream == w) for w in words[:20]])
    observed = counts / len(stream)
    # Binomial standard error of each head word's share; 5 sigma keeps the test stable.
    sigma = np.sqrt(expected[:20] * (1 - expected[:20]) / len(stream))
    assert np.all(np.abs(observed - expected[:20]) < 5 * sigma)


def test_heads_are_flat_and_differ_between_languages():
    english, german = _tuples("WORDS_EN", 100_000), _tuples("WORDS_DE", 100_000)
    for stream in (english, german):
        _, counts = np.unique(stream, return_counts=True)
        shares = np.sort(counts)[::-1] / len(stream)
        assert 0.03 < shares[0] < 0.08  # hottest word a few percent, not a Zipf z=2 giant
        assert np.count_nonzero(shares > 0.01) >= 8  # many keys near 1/W at W=50..100
    assert set(english[:1000].tolist()).isdisjoint({"der", "und"})


def test_messages_are_keyed_json_that_silver_parses():
    spec = DatasetSpec(name="WORDS_RU", messages=500, seed=3, keys=500)
    dataset = make_dataset(spec)
    batch = next(dataset.messages(batch_size=500))
    tuples = next(dataset.tuples(batch_size=500))
    parse = parser_for("WORDS_RU")
    for key, payload, stamp, word in zip(
        batch.keys, batch.payloads, batch.timestamps_ms, tuples.keys, strict=True
    ):
        assert key.decode() == word == json.loads(payload)["key"]
        assert parse(payload, int(stamp)) == [(word, 1, int(stamp))]
