from __future__ import annotations

from dataclasses import dataclass

import mmh3
import numpy as np
import pyarrow as pa
import pytest

from silver.groupings.hashing import ALT_SEED, hash_keys, stable_hash
from silver.groupings.state_codec import StateSerializationError, decode_state, encode_state

KEYS = ["a", "b", "a", "ünïcödé", "", "a" * 2000, "b"]


@pytest.mark.parametrize("as_column", [
    list, pa.array, lambda keys: pa.chunked_array([pa.array(keys[:3]), pa.array(keys[3:])]),
    lambda keys: pa.array(keys).slice(0),
])  # fmt: skip
def test_batch_hashes_equal_murmur3_of_each_key(as_column):
    hashes = hash_keys(as_column(KEYS))
    assert hashes.home.tolist() == [mmh3.hash(k, 0, signed=False) for k in KEYS]
    assert hashes.alt.tolist() == [mmh3.hash(k, ALT_SEED, signed=False) for k in KEYS]
    assert hashes.fingerprint.tolist() == [mmh3.hash64(k, hashes_seed())[0] for k in KEYS]
    assert list(hashes.distinct_keys) == list(dict.fromkeys(KEYS))  # first-seen order
    assert stable_hash("a") == mmh3.hash("a", 0, signed=False)


def test_a_null_key_in_an_arrow_column_is_refused():
    with pytest.raises(ValueError, match="1 of the keys are null"):
        hash_keys(pa.array(["a", None]))


def hashes_seed() -> int:
    from silver.groupings.hashing import FINGERPRINT_SEED

    return FINGERPRINT_SEED


def test_names_of_maps_fingerprints_back_to_keys():
    hashes = hash_keys(["x", "y", "x"])
    assert hashes.names_of(hashes.fingerprint) == ["x", "y", "x"]
    assert hashes.names_of(np.array([12345], dtype=np.int64)) == [None]


@dataclass
class _State:
    workers: int
    loads: np.ndarray
    names: np.ndarray


def test_state_round_trips_through_bytes():
    state = _State(3, np.array([1, 2, 3], dtype=np.int64), np.array(["hot", "key"]))
    restored = decode_state(_State, encode_state(state))
    assert restored.workers == 3
    assert restored.loads.tolist() == [1, 2, 3] and restored.loads.dtype == np.int64
    assert restored.names.tolist() == ["hot", "key"]


def test_garbage_bytes_raise_a_domain_error():
    with pytest.raises(StateSerializationError):
        decode_state(_State, b"\x00garbage")


def test_state_bytes_are_an_npz_archive_that_np_load_reads():
    import io

    state = _State(3, np.array([1, 2, 3], dtype=np.int64), np.array(["hot", "kéy"]))
    with np.load(io.BytesIO(encode_state(state)), allow_pickle=False) as stored:
        assert sorted(stored.files) == ["loads", "names", "workers"]
        assert stored["names"].tolist() == ["hot", "kéy"] and stored["workers"].ndim == 0


def test_object_arrays_are_refused_when_written_not_when_read():
    state = _State(3, np.array([1, None], dtype=object), np.array(["a"]))
    with pytest.raises(StateSerializationError, match="pickle"):
        encode_state(state)
