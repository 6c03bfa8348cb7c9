"""The compiled murmur3 kernels give exactly what ``mmh3`` gives, key by key."""

from __future__ import annotations

import mmh3
import numpy as np
import pyarrow as pa
import pytest

from silver.groupings._murmur3 import hash_utf8_column
from silver.groupings.hashing import ALT_SEED, FINGERPRINT_SEED, HOME_SEED

SEEDS = (HOME_SEED, ALT_SEED, FINGERPRINT_SEED)


def _reference(keys: list[str], seeds: tuple[int, int, int] = SEEDS) -> np.ndarray:
    rows = [(mmh3.hash(k, seeds[0], signed=False), mmh3.hash(k, seeds[1], signed=False),
             mmh3.hash64(k, seeds[2])[0]) for k in keys]  # fmt: skip
    return np.array(rows, dtype=np.int64).reshape(-1, 3)


def _kernel(column: pa.Array, seeds: tuple[int, int, int] = SEEDS) -> np.ndarray:
    _, offsets, data = column.buffers()
    width = np.int64 if pa.types.is_large_string(column.type) else np.int32
    data_bytes = np.frombuffer(data if data is not None else b"\0", dtype=np.uint8)
    return hash_utf8_column(data_bytes, np.frombuffer(offsets, dtype=width),
                            column.offset, len(column), seeds)  # fmt: skip


def _random_keys(count: int, seed: int) -> list[str]:
    rng = np.random.default_rng(seed)
    # ASCII, 2-, 3- and 4-byte UTF-8 letters (surrogates excluded: they are not encodable).
    alphabet = [chr(c) for c in (*range(32, 127), 0xE9, 0x416, 0x4E2D, 0x20AC, 0x1F600, 0x10348)]
    lengths = rng.integers(0, 80, size=count)
    return ["".join(rng.choice(alphabet, size=n)) for n in lengths]


@pytest.mark.parametrize("kind", [pa.string(), pa.large_string()], ids=str)
def test_every_length_through_several_blocks_matches_mmh3(kind):
    # Lengths 0..70 cover every tail of the 4-byte and the 16-byte block loops.
    keys = [("abcdefghijklmnopqrstuvwxyz0123456789" * 2)[:n] for n in range(71)]
    assert np.array_equal(_kernel(pa.array(keys, kind)), _reference(keys))


def test_random_unicode_keys_match_mmh3():
    keys = _random_keys(3000, seed=5)
    assert np.array_equal(_kernel(pa.array(keys, pa.large_string())), _reference(keys))


def test_a_sliced_column_hashes_its_own_strings():
    keys = _random_keys(50, seed=6)
    column = pa.array(keys, pa.string()).slice(17, 20)
    assert np.array_equal(_kernel(column), _reference(keys[17:37]))


@pytest.mark.parametrize("seeds", [(0, 0, 0), (1, 0xFFFFFFFF, 0x80000000), (42, 7, 0xDEADBEEF)])
def test_any_seed_matches_mmh3(seeds):
    keys = _random_keys(200, seed=7)
    assert np.array_equal(_kernel(pa.array(keys, pa.string()), seeds), _reference(keys, seeds))


def test_empty_strings_and_an_empty_column():
    assert np.array_equal(_kernel(pa.array(["", ""], pa.string())), _reference(["", ""]))
    assert _kernel(pa.array([], pa.string())).shape == (0, 3)
