"""Left and right records for the join, as they would arrive from two Kafka topics.

Every left record gets a right partner with probability ``match_ratio``; the
partner is created ``gap`` ms later (exponential, capped at ``gap_max_ms``), as
in the seed where "the left side item was always earlier than the right one".
A record's *creation time* is its event time; the order in which records reach
their partition is creation time plus, for a ``jump_fraction`` of them, a delay
of up to ``jump_max_ms`` (the seed's "jumps backwards in time"). Both sides use
the same id -> partition hash, like a keyed producer.

A *stall* withholds one right-topic partition from ``stall_at_fraction`` of the
creation-time span on: those records (and that partition's closing heartbeat)
form phase 1, produced only after phase 0 has been consumed. Every partition of
both topics ends with a heartbeat record (no id) created ``close_ms`` after the
last record, so a finite run can expire everything it holds.

Pure numpy/pandas, deterministic for a given spec.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

import mmh3
import numpy as np
import pandas as pd

__all__ = ["RECORD_COLUMNS", "JoinData", "JoinDataSpec", "generate"]

RECORD_COLUMNS = ["side", "partition", "id", "created_ms", "arrival_ms", "phase"]


@dataclass(frozen=True)
class JoinDataSpec:
    """What to generate (all times in ms of creation time)."""

    lefts: int = 100_000
    match_ratio: float = 0.9
    rate: float = 10_000.0
    partitions: int = 4
    gap_mean_ms: float = 200.0
    gap_max_ms: int = 1_000
    jump_fraction: float = 0.02
    jump_max_ms: int = 300
    stall_partition: int | None = None
    stall_at_fraction: float = 0.5
    close_ms: int = 60_000
    seed: int = 42
    start_ms: int = 1_700_000_000_000

    def __post_init__(self) -> None:
        """Reject specs that cannot be generated."""
        if self.lefts < 1 or self.partitions < 1 or self.rate <= 0:
            raise ValueError("lefts, partitions and rate must be positive")
        if not 0.0 <= self.match_ratio <= 1.0 or not 0.0 <= self.jump_fraction <= 1.0:
            raise ValueError("match_ratio and jump_fraction must be within [0, 1]")
        if self.stall_partition is not None and not 0 <= self.stall_partition < self.partitions:
            raise ValueError(f"stall_partition must be in [0, {self.partitions - 1}]")


@dataclass(frozen=True)
class JoinData:
    """Generated records in arrival order, and the ground truth.

    Attributes:
        records: one row per message (``RECORD_COLUMNS``); ``id`` is None for heartbeats.
        left_ids, left_created_ms: every left record's id and creation time.
        right_ids, right_created_ms: the same for every right (a left's partner).
    """

    spec: JoinDataSpec
    records: pd.DataFrame
    left_ids: np.ndarray = field(repr=False)
    left_created_ms: np.ndarray = field(repr=False)
    right_ids: np.ndarray = field(repr=False)
    right_created_ms: np.ndarray = field(repr=False)

    # Built on first use only: for millions of records these dicts take gigabytes,
    # and producing the topics does not need them.
    @functools.cached_property
    def matches(self) -> dict[str, int]:
        """Left id -> right creation time, for every left that has a partner."""
        return dict(zip(self.right_ids.tolist(), self.right_created_ms.tolist(), strict=True))

    @functools.cached_property
    def left_created(self) -> dict[str, int]:
        """Left id -> creation time, for every left record."""
        return dict(zip(self.left_ids.tolist(), self.left_created_ms.tolist(), strict=True))

    @property
    def phases(self) -> int:
        """How many production phases there are (2 with a stall)."""
        return int(self.records["phase"].max()) + 1

    def phase(self, number: int) -> pd.DataFrame:
        """The records of one phase, in arrival order."""
        return self.records[self.records["phase"] == number]


def _ids(count: int, seed: int) -> np.ndarray:
    return np.array([f"{seed}-{i:010d}" for i in range(count)], dtype=object)


def _jumps(rng: np.random.Generator, count: int, spec: JoinDataSpec) -> np.ndarray:
    jumped = rng.random(count) < spec.jump_fraction
    return np.where(jumped, rng.integers(1, spec.jump_max_ms + 1, count), 0)


def _side(rng: np.random.Generator, side: int, ids: np.ndarray, created: np.ndarray,
          spec: JoinDataSpec) -> pd.DataFrame:  # fmt: skip
    partitions = np.array([mmh3.hash(i, 0, signed=False) % spec.partitions for i in ids])
    return pd.DataFrame({"side": side, "partition": partitions.astype(np.int32), "id": ids,
                         "created_ms": created, "arrival_ms": created + _jumps(rng, len(ids), spec),
                         "phase": 0})  # fmt: skip


def _heartbeats(side: int, partitions: int, created: int) -> pd.DataFrame:
    return pd.DataFrame({"side": side, "partition": np.arange(partitions, dtype=np.int32),
                         "id": None, "created_ms": created, "arrival_ms": created,
                         "phase": 0})  # fmt: skip


def generate(spec: JoinDataSpec) -> JoinData:
    """Generate both topics' records and the ground truth for ``spec``."""
    rng = np.random.default_rng(spec.seed)
    ids = _ids(spec.lefts, spec.seed)
    left_created = spec.start_ms + (np.arange(spec.lefts) * 1000.0 / spec.rate).astype(np.int64)
    matched = rng.random(spec.lefts) < spec.match_ratio
    gaps = np.minimum(rng.exponential(spec.gap_mean_ms, spec.lefts), spec.gap_max_ms).astype(np.int64)
    right_ids, right_created = ids[matched], (left_created + gaps)[matched]
    end = int(max(left_created.max(), right_created.max(initial=0))) + spec.close_ms
    frames = [_side(rng, 0, ids, left_created, spec), _side(rng, 1, right_ids, right_created, spec),
              _heartbeats(0, spec.partitions, end), _heartbeats(1, spec.partitions, end)]  # fmt: skip
    records = pd.concat(frames, ignore_index=True)
    if spec.stall_partition is not None:
        stall_at = spec.start_ms + int(spec.stall_at_fraction * (end - spec.close_ms - spec.start_ms))
        stalled = ((records["side"] == 1) & (records["partition"] == spec.stall_partition)
                   & (records["arrival_ms"] >= stall_at))  # fmt: skip
        records.loc[stalled, "phase"] = 1
    records = records.sort_values(["phase", "arrival_ms", "side", "partition"], kind="stable")
    return JoinData(spec, records.reset_index(drop=True)[RECORD_COLUMNS], ids, left_created,
                    right_ids, right_created)  # fmt: skip
