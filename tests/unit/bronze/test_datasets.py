"""Every dataset: determinism, batching, timestamps, and parse(messages) == tuples()."""

from __future__ import annotations

import numpy as np
import pytest

from bronze.datasets.base import DatasetSpec, MessageBatch, TupleBatch
from bronze.datasets.chunked import CHUNK_MESSAGES
from bronze.datasets.registry import dataset_names, make_dataset
from bronze.datasets.words import WORD_DATASETS
from silver.parsers.registry import parser_for

NAMES = [
    "COUNTRY_SKEW_R0",
    "COUNTRY_SKEW_R37",
    "COUNTRY_SKEW_R80",
    "COUNTRY_SKEW_R100",
    "COUNTRY_HALF_SKEW_R80",
    "ZIPF",
    "ZIPF_SHIFTING",
    "TWITTER_TICKER",
    "TWITTER_ELECTION",
    "WIKIPEDIA_PAGEVIEWS",
    "WIKIPEDIA_PAGEVIEWS_BY_LANG",
    "WIKIPEDIA_CLICKSTREAM",
    *WORD_DATASETS,
]
# More than one internal chunk, so chunk borders are crossed.
MESSAGES = CHUNK_MESSAGES + 1_808


def _spec(name: str, **overrides: object) -> DatasetSpec:
    # A short shift interval so ZIPF_SHIFTING moves several times within the run.
    fields = {"name": name, "messages": MESSAGES, "seed": 7, "shift_interval_s": 1.5, "keys": 500}
    return DatasetSpec(**{**fields, **overrides})


def _messages(spec: DatasetSpec, batch_size: int = 10_000) -> MessageBatch:
    batches = list(make_dataset(spec).messages(batch_size))
    return MessageBatch(
        [k for b in batches for k in b.keys],
        [p for b in batches for p in b.payloads],
        np.concatenate([b.timestamps_ms for b in batches]) if batches else np.empty(0, np.int64),
    )


def _tuples(spec: DatasetSpec, batch_size: int = 10_000) -> TupleBatch:
    batches = list(make_dataset(spec).tuples(batch_size))
    return TupleBatch(
        np.concatenate([b.keys for b in batches]),
        np.concatenate([b.counts for b in batches]),
        np.concatenate([b.event_times_ms for b in batches]),
    )


def _as_lists(batch: TupleBatch) -> tuple[list[str], list[int], list[int]]:
    return batch.keys.tolist(), batch.counts.tolist(), batch.event_times_ms.tolist()


def test_names_cover_every_family():
    families = dataset_names()
    for name in NAMES:
        make_dataset(_spec(name, messages=1))
    assert {n for n in families if "{" not in n} <= set(NAMES)
    assert {n.split("{")[0] for n in families if "{" in n} == {
        "COUNTRY_SKEW_R",
        "COUNTRY_HALF_SKEW_R",
    }


@pytest.mark.parametrize("name", NAMES)
def test_same_seed_same_stream(name):
    first, again = _messages(_spec(name)), _messages(_spec(name))
    assert first.payloads == again.payloads
    assert first.keys == again.keys
    assert _as_lists(_tuples(_spec(name))) == _as_lists(_tuples(_spec(name)))


@pytest.mark.parametrize("name", [n for n in NAMES if n != "COUNTRY_SKEW_R100"])
def test_other_seed_other_stream(name):
    assert _messages(_spec(name)).payloads != _messages(_spec(name, seed=8)).payloads
    assert _as_lists(_tuples(_spec(name))) != _as_lists(_tuples(_spec(name, seed=8)))


def test_r100_is_seed_independent_but_deterministic():
    assert (
        _messages(_spec("COUNTRY_SKEW_R100")).payloads
        == _messages(_spec("COUNTRY_SKEW_R100", seed=8)).payloads
    )


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("batch_size", [3, 1_000, CHUNK_MESSAGES + 1, 100_000])
def test_batch_size_does_not_change_the_stream(name, batch_size):
    spec = _spec(name)
    reference = _messages(spec)
    cut = list(make_dataset(spec).messages(batch_size))
    assert [len(b) for b in cut[:-1]] == [batch_size] * (len(cut) - 1)
    assert 0 < len(cut[-1]) <= batch_size
    joined = _messages(spec, batch_size)
    assert joined.payloads == reference.payloads
    assert joined.keys == reference.keys
    assert joined.timestamps_ms.tolist() == reference.timestamps_ms.tolist()
    assert _as_lists(_tuples(spec, batch_size)) == _as_lists(_tuples(spec))


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("messages", [0, 1, 5, MESSAGES])
def test_message_count(name, messages):
    spec = _spec(name, messages=messages)
    batch = _messages(spec, 4)
    assert len(batch) == len(batch.keys) == len(batch.timestamps_ms) == messages
    tuple_batches = list(make_dataset(spec).tuples(4))
    assert sum(len(b) for b in tuple_batches) >= messages
    assert len(tuple_batches) == -(-messages // 4)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("rate", [250.0, 2000.0, 3.0])
def test_timestamps_follow_rate(name, rate):
    spec = _spec(name, messages=600, rate=rate, start_ms=1_000_000)
    stamps = _messages(spec, 7).timestamps_ms
    expected = 1_000_000 + np.floor(np.arange(600) * 1000.0 / rate).astype(np.int64)
    assert stamps.dtype == np.int64
    assert stamps.tolist() == expected.tolist()
    assert stamps.tolist() == make_dataset(spec).timestamps(0, 600).tolist()


@pytest.mark.parametrize("name", NAMES)
def test_parsed_messages_equal_tuples(name):
    spec = _spec(name)
    messages = _messages(spec, 4_000)
    parse = parser_for(name)
    parsed = [
        parse(payload, stamp)
        for payload, stamp in zip(messages.payloads, messages.timestamps_ms.tolist(), strict=True)
    ]
    flat = [item for items in parsed for item in items]
    keys, counts, times = _as_lists(_tuples(spec, 3_000))
    assert [k for k, _, _ in flat] == keys
    assert [c for _, c, _ in flat] == counts
    assert [t for _, _, t in flat] == times
    # The Kafka message key is the message's first tuple key.
    assert messages.keys == [items[0][0].encode() for items in parsed]


@pytest.mark.parametrize("name", NAMES)
def test_tuple_arrays_have_the_contract_types(name):
    batch = next(make_dataset(_spec(name, messages=100)).tuples())
    assert batch.keys.dtype == object and all(type(k) is str for k in batch.keys)
    assert batch.counts.dtype == np.int64 and (batch.counts > 0).all()
    assert batch.event_times_ms.dtype == np.int64


@pytest.mark.parametrize("name", NAMES)
def test_tuples_never_render_messages(name, monkeypatch):
    dataset = make_dataset(_spec(name, messages=50))

    def forbidden(*args, **kwargs):
        raise AssertionError("tuples() rendered messages")

    monkeypatch.setattr(dataset, "_chunk_messages", forbidden)
    assert sum(len(b) for b in dataset.tuples()) >= 50


def test_zipf_makes_a_million_tuples():
    dataset = make_dataset(DatasetSpec(name="ZIPF", messages=1_000_000))
    assert sum(len(batch) for batch in dataset.tuples()) == 1_000_000


@pytest.mark.parametrize("batch_size", [0, -1])
def test_bad_batch_size(batch_size):
    dataset = make_dataset(_spec("ZIPF"))
    with pytest.raises(ValueError, match="batch_size"):
        dataset.messages(batch_size)
    with pytest.raises(ValueError, match="batch_size"):
        dataset.tuples(batch_size)
