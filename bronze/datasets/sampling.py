"""Seeded random draws shared by the generators (numpy ``Generator``, PCG64).

Every chunk of a stream gets its own generator derived from ``(seed, stream,
index)`` through numpy's ``SeedSequence``, so a chunk's content never depends on
how many values an earlier chunk drew, nor on the caller's batch size.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

__all__ = [
    "CHUNK_STREAM",
    "PERMUTATION_STREAM",
    "chunk_rng",
    "draw_distinct",
    "draw_ranks",
    "zipf_cdf",
]

# Independent random streams derived from one seed.
CHUNK_STREAM = 0
PERMUTATION_STREAM = 1

# Redraw rounds before draw_distinct settles the few remaining clashes
# deterministically (only reachable with extreme exponents on tiny vocabularies).
_MAX_REDRAWS = 64


def chunk_rng(seed: int, stream: int, index: int) -> np.random.Generator:
    """A PCG64 generator for one chunk (or permutation) of a seeded stream.

    Args:
        seed: the dataset seed; negative seeds are folded into 64 bits because
            ``SeedSequence`` only takes non-negative entropy.
        stream: which independent stream (``CHUNK_STREAM``, ``PERMUTATION_STREAM``).
        index: the chunk or interval number.
    """
    return np.random.Generator(np.random.PCG64([seed % (1 << 64), stream, index]))


@lru_cache(maxsize=16)
def zipf_cdf(count: int, exponent: float) -> np.ndarray:
    """Cumulative probabilities of ranks ``1..count`` with ``P(rank) ∝ rank**-exponent``.

    Cached; treat the result as read-only. The last entry is exactly 1.0 so an
    inverse-CDF lookup never falls off the end through rounding.
    """
    weights = np.arange(1, count + 1, dtype=np.float64) ** -exponent
    cdf = np.cumsum(weights)
    cdf /= cdf[-1]
    cdf[-1] = 1.0
    return cdf


def draw_ranks(
    rng: np.random.Generator, cdf: np.ndarray, size: int | tuple[int, ...]
) -> np.ndarray:
    """Zero-based ranks drawn by inverse CDF (``searchsorted`` of uniform draws)."""
    return np.searchsorted(cdf, rng.random(size), side="right").astype(np.int64)


def draw_distinct(rng: np.random.Generator, cdf: np.ndarray, rows: int, width: int) -> np.ndarray:
    """``rows x width`` ranks, distinct within each row, each column skewed by ``cdf``.

    Column ``j`` is redrawn where it repeats an earlier column of its row, which
    samples without replacement from the renormalized distribution (successive
    sampling).

    Args:
        rng: the chunk's generator.
        cdf: cumulative probabilities from :func:`zipf_cdf`.
        rows: how many rows.
        width: ranks per row; at most ``len(cdf)``.
    """
    if width > len(cdf):
        raise ValueError(f"cannot draw {width} distinct values from {len(cdf)}")
    out = draw_ranks(rng, cdf, (rows, width))
    for column in range(1, width):
        for _ in range(_MAX_REDRAWS):
            clash = (out[:, :column] == out[:, column : column + 1]).any(axis=1)
            if not clash.any():
                break
            out[clash, column] = draw_ranks(rng, cdf, int(clash.sum()))
        else:
            _settle_clashes(out, column)
    return out


def _settle_clashes(out: np.ndarray, column: int) -> None:
    # Give each still-clashing cell the lowest rank its row has not used yet.
    clash = np.flatnonzero((out[:, :column] == out[:, column : column + 1]).any(axis=1))
    for row in clash.tolist():
        used = set(out[row, :column].tolist())
        out[row, column] = next(rank for rank in range(len(used) + 1) if rank not in used)
