"""A dataset generated in fixed chunks, re-cut into batches of any size.

Each chunk of ``CHUNK_MESSAGES`` messages is drawn from its own generator
(:func:`~bronze.datasets.sampling.chunk_rng`), then the chunks are sliced and
joined into the caller's batches. The stream therefore depends on the spec
alone: ``messages(7)`` and ``messages(100_000)`` concatenate to the same bytes.

A subclass draws a chunk's random choices once (:meth:`ChunkedDataset._draw`)
and turns that draw into either tuples or messages, so both views describe the
same stream without ever rendering and re-parsing messages.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

import numpy as np

from bronze.datasets.base import Dataset, DatasetSpec, MessageBatch, TupleBatch
from bronze.datasets.sampling import CHUNK_STREAM, chunk_rng

__all__ = ["CHUNK_MESSAGES", "ChunkedDataset", "join_messages", "rebatch", "take_messages"]

# Large enough that per-chunk Python overhead vanishes, small enough that a
# short run does not draw far more than it needs.
CHUNK_MESSAGES = 8192

DrawT = TypeVar("DrawT")
PartT = TypeVar("PartT")
PieceT = TypeVar("PieceT")
OutT = TypeVar("OutT")

# A chunk's tuples plus where each message's tuples start (length messages + 1).
_TupleChunk = tuple[TupleBatch, np.ndarray]


def rebatch(
    parts: Iterator[tuple[PartT, int]],
    batch_size: int,
    take: Callable[[PartT, int, int], PieceT],
    join: Callable[[list[PieceT]], OutT],
) -> Iterator[OutT]:
    """Re-cut a stream of parts into batches of exactly ``batch_size`` messages.

    Args:
        parts: ``(part, messages in part)`` in stream order.
        batch_size: messages per output batch (the last one may be shorter).
        take: ``take(part, start, stop)`` slices messages ``start:stop`` of a part.
        join: concatenates the pieces of one output batch.
    """
    pending: list[PieceT] = []
    filled = 0
    for part, length in parts:
        start = 0
        while start < length:
            stop = min(length, start + batch_size - filled)
            pending.append(take(part, start, stop))
            filled += stop - start
            start = stop
            if filled == batch_size:
                yield join(pending)
                pending, filled = [], 0
    if pending:
        yield join(pending)


def take_messages(part: MessageBatch, start: int, stop: int) -> MessageBatch:
    """Messages ``start:stop`` of a batch."""
    return MessageBatch(
        part.keys[start:stop], part.payloads[start:stop], part.timestamps_ms[start:stop]
    )


def join_messages(pieces: list[MessageBatch]) -> MessageBatch:
    """The pieces as one batch, in order."""
    if len(pieces) == 1:
        return pieces[0]
    return MessageBatch(
        [key for piece in pieces for key in piece.keys],
        [payload for piece in pieces for payload in piece.payloads],
        np.concatenate([piece.timestamps_ms for piece in pieces]),
    )


def _take_tuples(part: _TupleChunk, start: int, stop: int) -> TupleBatch:
    batch, offsets = part
    rows = slice(int(offsets[start]), int(offsets[stop]))
    return TupleBatch(batch.keys[rows], batch.counts[rows], batch.event_times_ms[rows])


def _join_tuples(pieces: list[TupleBatch]) -> TupleBatch:
    if len(pieces) == 1:
        return pieces[0]
    return TupleBatch(
        np.concatenate([piece.keys for piece in pieces]),
        np.concatenate([piece.counts for piece in pieces]),
        np.concatenate([piece.event_times_ms for piece in pieces]),
    )


def _check_batch_size(batch_size: int) -> None:
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")


class ChunkedDataset(Dataset, Generic[DrawT]):
    """Base of the generators: draw a chunk once, render it as tuples or messages."""

    def __init__(self, spec: DatasetSpec, name: str) -> None:
        """Bind the spec.

        Args:
            spec: what to generate.
            name: the canonical dataset name (upper case, the seed's spelling).
        """
        super().__init__(spec)
        self.name = name

    @abstractmethod
    def _draw(self, rng: np.random.Generator, first: int, timestamps: np.ndarray) -> DrawT:
        """The random choices of one chunk (messages ``first .. first + len(timestamps) - 1``)."""

    @abstractmethod
    def _chunk_tuples(
        self, draw: DrawT, timestamps: np.ndarray
    ) -> tuple[TupleBatch, np.ndarray | None]:
        """A chunk's tuples and the tuple count of each message (``None``: one each)."""

    @abstractmethod
    def _chunk_messages(
        self, draw: DrawT, timestamps: np.ndarray, first: int
    ) -> tuple[list[bytes], list[bytes]]:
        """A chunk's Kafka keys and payloads."""

    def _draws(self) -> Iterator[tuple[int, np.ndarray, DrawT]]:
        total = self.spec.messages
        for index, first in enumerate(range(0, total, CHUNK_MESSAGES)):
            timestamps = self.timestamps(first, min(CHUNK_MESSAGES, total - first))
            rng = chunk_rng(self.spec.seed, CHUNK_STREAM, index)
            yield first, timestamps, self._draw(rng, first, timestamps)

    def messages(self, batch_size: int = 10_000) -> Iterator[MessageBatch]:
        """The raw messages, ``batch_size`` at a time (the last batch may be shorter)."""
        _check_batch_size(batch_size)
        parts = (
            (MessageBatch(*self._chunk_messages(draw, stamps, first), stamps), len(stamps))
            for first, stamps, draw in self._draws()
        )
        return rebatch(parts, batch_size, take_messages, join_messages)

    def tuples(self, batch_size: int = 10_000) -> Iterator[TupleBatch]:
        """The tuples of ``batch_size`` messages at a time, generated without rendering."""
        _check_batch_size(batch_size)
        return rebatch(self._tuple_chunks(), batch_size, _take_tuples, _join_tuples)

    def _tuple_chunks(self) -> Iterator[tuple[_TupleChunk, int]]:
        for _, stamps, draw in self._draws():
            batch, per_message = self._chunk_tuples(draw, stamps)
            offsets = np.zeros(len(stamps) + 1, dtype=np.int64)
            if per_message is None:
                offsets[1:] = np.arange(1, len(stamps) + 1)
            else:
                np.cumsum(per_message, out=offsets[1:])
            yield (batch, offsets), len(stamps)
