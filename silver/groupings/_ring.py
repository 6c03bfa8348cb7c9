"""The murmur3 token ring behind CONSISTENT_HASH (seed 002), with its memos.

Token ``j`` of worker ``i`` is the string ``f"token-{i}-{j}"``; its ring
position is its unsigned 32-bit MurmurHash3 (seed 0). A worker with ``T`` tokens
owns tokens ``0 .. T-1``: halving drops the highest-numbered ones and doubling
adds the next ones, so a ring is fully determined by the token count per worker.

Everything here is derived from ``(workers, token counts)`` and never decides
anything by itself, so it is memoized at module level instead of being stored
in grouping state: a restored grouping rebuilds the same ring.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import mmh3
import numpy as np

__all__ = ["Ring", "build_ring", "token_position"]

TOKEN_SEED = 0


def token_position(worker: int, token: int) -> int:
    """Ring position of token ``token`` of ``worker``."""
    return mmh3.hash(f"token-{worker}-{token}", TOKEN_SEED, signed=False)


@dataclass(frozen=True, slots=True)
class Ring:
    """Tokens sorted clockwise.

    Attributes:
        positions: uint32 token positions, ascending. Equal positions are
            ordered by (worker, token number), so the lowest worker id wins a tie.
        owners: int32 worker of each token, plus one extra entry repeating the
            first owner: a key past the last token wraps around to it.
    """

    positions: np.ndarray
    owners: np.ndarray

    def lookup(self, key_positions: np.ndarray) -> np.ndarray:
        """Worker of the first token clockwise at or after each key position."""
        index = np.searchsorted(self.positions, key_positions, side="left")
        return self.owners[index]


@dataclass(frozen=True, slots=True)
class _Universe:
    """Every token any ring of ``workers`` x ``per_worker`` may use, pre-sorted."""

    positions: np.ndarray  # uint32, ascending
    workers: np.ndarray  # int32
    numbers: np.ndarray  # int32: the token's j


@lru_cache(maxsize=4)
def _universe(workers: int, per_worker: int) -> _Universe:
    # Hashing W * cap strings costs tens of ms; sorting them once makes every
    # later ring a boolean mask of this order instead of a fresh sort.
    owner = np.repeat(np.arange(workers, dtype=np.int32), per_worker)
    number = np.tile(np.arange(per_worker, dtype=np.int32), workers)
    positions = np.fromiter(
        (token_position(int(w), int(j)) for w, j in zip(owner, number, strict=True)),
        dtype=np.uint32,
        count=owner.shape[0],
    )
    order = np.lexsort((number, owner, positions))
    return _Universe(positions[order], owner[order], number[order])


@lru_cache(maxsize=8)
def build_ring(tokens: tuple[int, ...], per_worker: int) -> Ring:
    """The ring where worker ``i`` holds tokens ``0 .. tokens[i]-1``.

    Args:
        tokens: token count of each worker (each in ``[1, per_worker]``).
        per_worker: the most tokens any worker can ever hold (sizes the memo).
    """
    universe = _universe(len(tokens), per_worker)
    counts = np.asarray(tokens, dtype=np.int32)
    keep = universe.numbers < counts[universe.workers]
    owners = universe.workers[keep]
    return Ring(
        positions=universe.positions[keep],
        owners=np.concatenate([owners, owners[:1]]),
    )
