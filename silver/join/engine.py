"""The join state machine: pending records, per-partition progress, expiry by the slowest.

One :class:`JoinEngine` holds the records of one shard of join ids. A batch of
input rows (``side`` 0 = left, 1 = right, ``partition``, ``offset``, ``id``,
``created_ms``; heartbeats have no id) is processed in a
fixed order, so a replayed batch over the same restored state gives the same
output:

1. Progress: for every source partition ``(side, partition)`` the largest
   creation time seen. Records of one partition arrive roughly in creation
   order, so that is how far the partition has been consumed (at least: a
   shard sees only its own ids' records of it, and every heartbeat).
2. Matching, one left to at most one right (1 -> 0..1): the batch's records
   join the pending ones (a repeated id while its first copy waits is a
   ``duplicate``); every id pending on both sides within ``window_ms`` (on
   creation time) is emitted as a pair and leaves; the rest waits. Vectorized:
   one merge per batch, not a Python step per record.
3. Expiry: ``expiry = min(progress over every expected partition) - sync_delay_ms``.
   The slowest partition governs: while any partition lags (or has not been
   seen), expiry stays behind it, so a stalled partition pauses expiry instead
   of turning its partners into false "unmatched" rows. A pending left with
   ``created + window_ms < expiry`` is emitted unmatched; a pending right that
   old is an orphan, or *late* when its left was already emitted unmatched
   (those left ids are remembered while expiry moves on by one window plus
   the sync-delay).

State is bounded by the window: everything older than ``expiry - window_ms``
has left it. ``snapshot()``/``restore()`` turn it into Arrow IPC bytes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from silver.join.sharding import stack
from silver.join.state import PENDING_COLUMNS, JoinState

__all__ = ["OUTPUT_COLUMNS", "JoinEngine", "JoinParams"]

OUTPUT_COLUMNS = ["record", "id", "left_created_ms", "right_created_ms", "left_partition",
                  "left_offset", "right_partition", "right_offset", "clock_ms", "expiry_ms"]  # fmt: skip


@dataclass(frozen=True)
class JoinParams:
    """Join settings.

    Attributes:
        window_ms: largest creation-time difference between a left and its right.
        sync_delay_ms: how far behind the slowest partition expiry stays, to
            tolerate records that jump backwards in time within a partition.
        partitions: partition count of the (left, right) topics; expiry waits
            until every one of them has been seen.
    """

    window_ms: int = 2_000
    sync_delay_ms: int = 500
    partitions: tuple[int, int] = (4, 4)

    def __post_init__(self) -> None:
        """Reject impossible settings."""
        if self.window_ms < 0 or self.sync_delay_ms < 0:
            raise ValueError("window_ms and sync_delay_ms must not be negative")
        if min(self.partitions) < 1:
            raise ValueError("each topic needs at least one partition")


def _left_rows(record: str, frame: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame({"record": record, "id": frame["id"].to_numpy(),
                         "left_created_ms": frame["created_ms"].to_numpy(),
                         "left_partition": frame["partition"].to_numpy(),
                         "left_offset": frame["offset"].to_numpy()})  # fmt: skip


def _right_rows(record: str | np.ndarray, frame: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame({"record": record, "id": frame["id"].to_numpy(),
                         "right_created_ms": frame["created_ms"].to_numpy(),
                         "right_partition": frame["partition"].to_numpy(),
                         "right_offset": frame["offset"].to_numpy()})  # fmt: skip


def _add(pending: pd.DataFrame, new: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Pending records plus new ones; a repeated id keeps its first record, the rest are duplicates."""
    if new.empty:
        return pending, new
    combined = pd.concat([pending, new], ignore_index=True) if not pending.empty else new
    repeated = combined["id"].duplicated(keep="first").to_numpy()
    return combined[~repeated].reset_index(drop=True), combined[repeated]


class JoinEngine:
    """The join of one shard: feed batches with :meth:`process`, persist with :meth:`snapshot`."""

    def __init__(self, params: JoinParams, state: JoinState | None = None) -> None:
        """Start empty, or from a restored state."""
        self.params = params
        self.state = state or JoinState()

    @classmethod
    def restore(cls, params: JoinParams, snapshot: bytes | None) -> JoinEngine:
        """An engine from :meth:`snapshot` bytes (None: a fresh one)."""
        return cls(params, JoinState.from_bytes(snapshot) if snapshot else None)

    def snapshot(self) -> bytes:
        """The state as bytes (Arrow IPC)."""
        return self.state.to_bytes()

    def expiry(self) -> int | None:
        """Creation time before which nothing more is expected, or None while a partition is unseen."""
        progress = self.state.progress
        expected = [(s, p) for s in (0, 1) for p in range(self.params.partitions[s])]
        if any(key not in progress for key in expected):
            return None
        return min(progress[key] for key in expected) - self.params.sync_delay_ms

    def process(self, rows: pd.DataFrame) -> pd.DataFrame:
        """Process one batch (any order; it is sorted first); returns the emitted rows."""
        ordered = rows.sort_values(["side", "partition", "offset"], kind="stable")
        self._advance(ordered)
        records = ordered[ordered["id"].notna() & ordered["created_ms"].notna()]
        records = records.astype(
            {"created_ms": np.int64, "partition": np.int32, "offset": np.int64}
        )
        side = records["side"].to_numpy()
        state = self.state
        state.lefts, left_dups = _add(state.lefts, records[side == 0][PENDING_COLUMNS])
        state.rights, right_dups = _add(state.rights, records[side == 1][PENDING_COLUMNS])
        # A record repeated while its first copy still waits (a replay): the first keeps its place.
        out = [_left_rows("duplicate", left_dups), _right_rows("duplicate", right_dups),
               self._match()]  # fmt: skip
        expiry = self.expiry()
        if expiry is not None:
            out.extend(self._expire(expiry))
        emitted = stack([frame for frame in out if not frame.empty] or [out[0]], OUTPUT_COLUMNS)
        emitted["clock_ms"] = state.clock
        return emitted

    def _advance(self, rows: pd.DataFrame) -> None:
        timed = rows[rows["created_ms"].notna()]
        if timed.empty:
            return
        latest = timed.groupby(["side", "partition"])["created_ms"].max()
        progress = self.state.progress
        for (side, partition), created in latest.items():
            key = (int(side), int(partition))
            progress[key] = max(progress.get(key, -(1 << 62)), int(created))
        # The stream clock counts records only: a closing heartbeat far in the
        # future must not inflate the latency of what it flushes.
        records = timed["created_ms"][timed["id"].notna()]
        if not records.empty:
            self.state.clock = max(self.state.clock or -(1 << 62), int(np.max(records)))

    def _match(self) -> pd.DataFrame:
        state = self.state
        pairs = state.lefts.merge(state.rights, on="id", suffixes=("_l", "_r"))
        pairs = pairs[
            (pairs["created_ms_r"] - pairs["created_ms_l"]).abs() <= self.params.window_ms
        ]
        if not pairs.empty:
            matched = pairs["id"].to_numpy()
            state.lefts = state.lefts[~state.lefts["id"].isin(matched)].reset_index(drop=True)
            state.rights = state.rights[~state.rights["id"].isin(matched)].reset_index(drop=True)
        return pd.DataFrame({"record": "matched", "id": pairs["id"].to_numpy(),
                             "left_created_ms": pairs["created_ms_l"].to_numpy(),
                             "right_created_ms": pairs["created_ms_r"].to_numpy(),
                             "left_partition": pairs["partition_l"].to_numpy(),
                             "left_offset": pairs["offset_l"].to_numpy(),
                             "right_partition": pairs["partition_r"].to_numpy(),
                             "right_offset": pairs["offset_r"].to_numpy()})  # fmt: skip

    def _expire(self, expiry: int) -> list[pd.DataFrame]:
        state = self.state
        horizon = expiry - self.params.window_ms
        old = (state.lefts["created_ms"] < horizon).to_numpy()
        unmatched, state.lefts = state.lefts[old], state.lefts[~old].reset_index(drop=True)
        if len(unmatched):
            gone = pd.DataFrame({"id": unmatched["id"].to_numpy(), "expiry_ms": expiry})
            state.expired = (
                pd.concat([state.expired, gone], ignore_index=True) if len(state.expired) else gone
            )
        old = (state.rights["created_ms"] < horizon).to_numpy()
        leftover, state.rights = state.rights[old], state.rights[~old].reset_index(drop=True)
        late = leftover["id"].isin(state.expired["id"]).to_numpy()
        # Remember expired lefts for one window plus sync-delay of expiry progress: a
        # partner arriving within that is counted late, anything later as an orphan.
        keep = self.params.window_ms + self.params.sync_delay_ms
        state.expired = state.expired[expiry - state.expired["expiry_ms"] <= keep].reset_index(
            drop=True
        )
        rows = [_left_rows("unmatched", unmatched),
                _right_rows(np.where(late, "late_right", "orphan_right"), leftover)]  # fmt: skip
        for frame in rows:
            frame["expiry_ms"] = expiry
        return rows
