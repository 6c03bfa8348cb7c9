"""The contract every grouping follows.

A grouping is a deterministic state machine over event time: given its state
and a batch of ``(key, event_time_ms)`` in order, it returns a worker id per
tuple and moves to its new state. Same input and state, same routing, so a
replayed batch routes identically. Nothing reads the wall clock.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, ClassVar, Generic, Self, TypeVar

import numpy as np
from pydantic import BaseModel, ConfigDict

from silver.groupings.hashing import KeyHashes, hash_keys
from silver.groupings.state_codec import (
    StateSerializationError,
    check_layout,
    decode_state,
    encode_state,
)

__all__ = ["Grouping", "GroupingParams", "HotKey"]


class GroupingParams(BaseModel):
    """Base of every grouping's parameters: frozen, and typos are errors."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class HotKey(BaseModel):
    """A key routed to more than its initial workers, and why."""

    model_config = ConfigDict(frozen=True)

    key: str
    pool_size: int
    workers: tuple[int, ...]
    estimated_share: float
    reason: str


P = TypeVar("P", bound=GroupingParams)
S = TypeVar("S")


class Grouping(ABC, Generic[P, S]):
    """Routes tuples to ``workers`` workers; subclasses supply the rule.

    Subclasses set ``name`` (the seed's spelling), ``params_type`` and
    ``state_type`` (a dataclass of numpy arrays and scalars), and implement
    :meth:`initial_state` and :meth:`_route`.
    """

    name: ClassVar[str]
    params_type: ClassVar[type[GroupingParams]]
    state_type: ClassVar[type[Any]]

    def __init__(self, workers: int, params: P | None = None, state: S | None = None) -> None:
        if workers < 1:
            raise ValueError(f"{self.name} needs at least one worker, got {workers}")
        self.workers = workers
        self.params: P = params if params is not None else self.params_type()  # type: ignore[assignment]
        self.state: S = state if state is not None else self.initial_state()
        stored_workers = getattr(self.state, "workers", workers)
        if stored_workers != workers:
            raise StateSerializationError(
                f"{self.name} state was saved for {stored_workers} workers, not {workers}"
            )

    @abstractmethod
    def initial_state(self) -> S:
        """State before the first tuple."""

    @abstractmethod
    def _route(self, hashes: KeyHashes, event_times_ms: np.ndarray) -> np.ndarray:
        """Route one batch (already hashed); update ``self.state`` in place."""

    def route(self, keys: Any, event_times_ms: Any) -> np.ndarray:
        """Worker id (int32, in ``[0, workers)``) for each tuple, in order.

        Args:
            keys: the batch's keys (strings), in stream order.
            event_times_ms: their event times, epoch milliseconds.
        """
        times = np.ascontiguousarray(event_times_ms, dtype=np.int64)
        if len(times) == 0:
            return np.empty(0, dtype=np.int32)
        hashes = hash_keys(keys)
        if len(hashes.home) != len(times):
            raise ValueError(f"{len(hashes.home)} keys but {len(times)} event times")
        return self._route(hashes, times)

    def hot_keys(self) -> list[HotKey]:
        """Keys currently spread over more workers than a cold key gets."""
        return []

    def snapshot(self) -> bytes:
        """The state as bytes (an immutable copy)."""
        return encode_state(self.state)

    @classmethod
    def restore(cls, workers: int, params: P | None, data: bytes | None) -> Self:
        """Rebuild a grouping from :meth:`snapshot` bytes (or fresh if ``None``).

        Raises:
            StateSerializationError: the bytes are not a snapshot of this grouping
                for ``workers`` workers.
        """
        fresh = cls(workers, params)
        if not data:
            return fresh
        state = decode_state(cls.state_type, data)
        check_layout(state, fresh.state)
        return cls(workers, params, state)
