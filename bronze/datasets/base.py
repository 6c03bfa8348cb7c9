"""What every dataset generator produces.

A dataset is a seeded generator of Kafka messages in its source's format, each
with an event timestamp. ``messages()`` yields what a producer writes; the
``tuples()`` view yields the ``(key, count, event_time_ms)`` tuples that the
dataset's silver parser extracts from those messages (a tweet may name several
tickers, so one message may give several tuples). Same spec, same output.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Protocol

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

__all__ = ["Dataset", "DatasetSpec", "MessageBatch", "MessageSource", "TupleBatch"]

# 2026-01-01T00:00:00Z: a fixed default start so generated runs replay exactly.
DEFAULT_START_MS = 1_767_225_600_000


class DatasetSpec(BaseModel):
    """How to generate a dataset.

    Attributes:
        name: the seed's source type, e.g. ``ZIPF`` or ``COUNTRY_SKEW_R80``.
        messages: how many messages to generate.
        rate: messages per second of event time (timestamps are evenly spaced).
        seed: random seed; same seed, same messages.
        start_ms: event time of the first message (epoch milliseconds).
        zipf_exponent: ZIPF / ZIPF_SHIFTING / skewed generators' exponent.
        keys: size of the key universe for ZIPF-like datasets.
        shift_interval_s: ZIPF_SHIFTING moves its hot set this often (event time).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = "ZIPF"
    messages: int = Field(default=100_000, ge=0)
    rate: float = Field(default=2000.0, gt=0)
    seed: int = 42
    start_ms: int = DEFAULT_START_MS
    zipf_exponent: float = Field(default=1.4, gt=0)
    keys: int = Field(default=10_000, ge=1)
    shift_interval_s: float = Field(default=60.0, gt=0)


@dataclass(frozen=True, slots=True)
class TupleBatch:
    """Parsed tuples, in stream order; all arrays have the same length.

    Attributes:
        keys: object array of ``str``.
        counts: int64 counts (1 for a plain occurrence).
        event_times_ms: int64 epoch milliseconds.
    """

    keys: np.ndarray
    counts: np.ndarray
    event_times_ms: np.ndarray

    def __len__(self) -> int:
        return len(self.keys)


@dataclass(frozen=True, slots=True)
class MessageBatch:
    """Raw messages as a producer writes them.

    Attributes:
        keys: Kafka message keys (UTF-8 bytes), one per message.
        payloads: message values in the dataset's source format (None: a tombstone).
        timestamps_ms: int64 event time of each message (the Kafka timestamp).
    """

    keys: list[bytes]
    payloads: list[bytes | None]
    timestamps_ms: np.ndarray

    def __len__(self) -> int:
        return len(self.payloads)


class MessageSource(Protocol):
    """What a producer writes: a dataset, or a file's rows as messages."""

    def messages(self, batch_size: int = 10_000) -> Iterator[MessageBatch]:
        """The messages, ``batch_size`` at a time."""


class Dataset(ABC):
    """A seeded generator; subclasses implement :meth:`messages` and :meth:`tuples`."""

    name: str

    def __init__(self, spec: DatasetSpec) -> None:
        self.spec = spec

    def timestamps(self, first_index: int, count: int) -> np.ndarray:
        """Event times of messages ``first_index .. first_index + count - 1``."""
        index = np.arange(first_index, first_index + count, dtype=np.float64)
        return self.spec.start_ms + np.floor(index * 1000.0 / self.spec.rate).astype(np.int64)

    def tuples_per_second(self, sample_messages: int = 10_000) -> float:
        """Tuples per second of event time (a message may carry several), from the first
        ``sample_messages`` messages: what the queue model's load is computed from."""
        first = next(self.tuples(batch_size=max(1, min(self.spec.messages, sample_messages))), None)
        if first is None or len(first) == 0:
            return self.spec.rate
        messages = min(self.spec.messages, sample_messages)
        return self.spec.rate * len(first) / messages

    @abstractmethod
    def messages(self, batch_size: int = 10_000) -> Iterator[MessageBatch]:
        """The raw messages, ``batch_size`` at a time."""

    @abstractmethod
    def tuples(self, batch_size: int = 10_000) -> Iterator[TupleBatch]:
        """The parsed tuples of the same messages (``batch_size`` messages at a time)."""
