"""Streams for the grouping tests: small, seeded, built without the dataset package."""

from __future__ import annotations

import numpy as np
import pytest


def zipf_stream(
    n: int, exponent: float = 1.4, keys: int = 1000, seed: int = 0, rate: float = 2000.0
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(keys, event_times_ms, probabilities by rank) of a Zipf stream."""
    rng = np.random.default_rng(seed)
    probabilities = np.arange(1, keys + 1, dtype=float) ** -exponent
    probabilities /= probabilities.sum()
    vocabulary = np.array([f"key-{i}" for i in range(1, keys + 1)], dtype=object)
    picks = rng.choice(keys, size=n, p=probabilities)
    times = (np.arange(n) * 1000.0 / rate).astype(np.int64)
    return vocabulary[picks], times, probabilities


@pytest.fixture
def small_zipf() -> tuple[np.ndarray, np.ndarray]:
    keys, times, _ = zipf_stream(30_000, keys=2000, seed=3)
    return keys, times


@pytest.fixture(params=[2, 7, 50], ids=lambda w: f"W{w}")
def workers(request: pytest.FixtureRequest) -> int:
    return int(request.param)
