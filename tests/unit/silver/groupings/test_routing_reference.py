"""Routing string keys read from CSV is what per-key ``mmh3`` hashing gives.

The reference hashes every tuple's key on its own with ``mmh3`` and restores each
snapshot through ``np.savez``/``np.load`` (how routing hashed and snapshots were
written before keys were hashed as a column). Each grouping must send every
tuple to the same worker and reach the same state, batch after batch.
"""

from __future__ import annotations

import dataclasses
import io

import mmh3
import numpy as np
import pytest

from bronze.datasets.csv_input import read_csv_tuples
from silver.groupings.hashing import ALT_SEED, FINGERPRINT_SEED, HOME_SEED, KeyHashes
from silver.groupings.registry import GROUPING_NAMES, grouping_class, make_grouping
from silver.groupings.state_codec import decode_state

VARIANTS = [(name, {}) for name in GROUPING_NAMES] + [
    ("DYNAMIC_KEY", {"mode": "seed", "key_space_cycle_ms": 2000, "check_interval_ms": 3000,
                     "warm_up_ms": 1000}),
    ("CONSISTENT_HASH", {"strategy": "halving"}),
]  # fmt: skip


def _reference_hashes(keys: np.ndarray) -> KeyHashes:
    names = [str(k) for k in keys]
    distinct = list(dict.fromkeys(names))
    fingerprints = {k: mmh3.hash64(k, FINGERPRINT_SEED)[0] for k in distinct}
    return KeyHashes(
        home=np.array([mmh3.hash(k, HOME_SEED, signed=False) for k in names], dtype=np.uint32),
        alt=np.array([mmh3.hash(k, ALT_SEED, signed=False) for k in names], dtype=np.uint32),
        fingerprint=np.array([fingerprints[k] for k in names], dtype=np.int64),
        distinct_keys=np.array(distinct, dtype=object),
        distinct_fingerprints=np.array([fingerprints[k] for k in distinct], dtype=np.int64),
    )


def _savez(state: object) -> bytes:
    buffer = io.BytesIO()
    fields = dataclasses.fields(state)  # type: ignore[arg-type]
    np.savez(buffer, **{f.name: np.asarray(getattr(state, f.name)) for f in fields})
    return buffer.getvalue()


def _fields(state: object) -> dict[str, np.ndarray]:
    return {f.name: np.asarray(getattr(state, f.name)) for f in dataclasses.fields(state)}  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def csv_batches(tmp_path_factory):
    # Skewed keys of every UTF-8 width and of lengths across the hash block sizes.
    rng = np.random.default_rng(11)
    stems = ["Turkey", "São_Tomé", "日本語の記事", "emoji-😀", "x", "a-rather-long-page-title-" * 3]
    vocabulary = [f"{stems[i % len(stems)]}-{i}" for i in range(3000)]
    weights = np.arange(1, len(vocabulary) + 1, dtype=float) ** -1.3
    picks = rng.choice(len(vocabulary), size=24_000, p=weights / weights.sum())
    path = tmp_path_factory.mktemp("csv") / "keys.csv"
    with path.open("w", encoding="utf-8") as handle:
        handle.write("key,count,timestamp_ms\n")
        for row, pick in enumerate(picks.tolist()):
            handle.write(f'"{vocabulary[pick]}",1,{1_767_225_600_000 + row * 5}\n')
    return list(read_csv_tuples(path, batch_size=3_000))


@pytest.mark.parametrize("workers", [7, 50], ids=lambda w: f"W{w}")
@pytest.mark.parametrize(("name", "params"), VARIANTS, ids=lambda v: str(v))
def test_routing_and_state_equal_the_per_key_reference(csv_batches, name, params, workers):
    routed = make_grouping(name, workers, params)
    reference = make_grouping(name, workers, params)
    for batch in csv_batches:
        got = routed.route(batch.keys, batch.event_times_ms)
        expected = reference._route(_reference_hashes(batch.keys), batch.event_times_ms)
        assert np.array_equal(got, expected)
        # Restore both sides from bytes, the new encoding against np.savez's.
        cls = grouping_class(name)
        routed = cls.restore(workers, routed.params, routed.snapshot())
        reference = cls.restore(workers, reference.params, _savez(reference.state))
        got_state, expected_state = _fields(routed.state), _fields(reference.state)
        assert got_state.keys() == expected_state.keys()
        for field, value in expected_state.items():
            assert got_state[field].dtype == value.dtype, field
            assert np.array_equal(got_state[field], value), field
    assert routed.hot_keys() == reference.hot_keys()


def test_snapshot_bytes_depend_on_the_state_only(csv_batches):
    grouping = make_grouping("W_CHOICES", 10)
    grouping.route(csv_batches[0].keys, csv_batches[0].event_times_ms)
    first = grouping.snapshot()
    assert grouping.snapshot() == first
    restored = decode_state(type(grouping.state), first)
    assert _fields(restored).keys() == _fields(grouping.state).keys()
