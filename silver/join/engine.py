"""The join state machine: pending records, per-partition progress, expiry by the slowest.

One :class:`JoinEngine` holds the records of one shard of join ids. A batch of
input rows (``side`` 0 = left, 1 = right, ``partition``, ``offset``, ``id``,
``created_ms``; heartbeats and progress rows have no id) is processed in a
fixed order, so a replayed batch over the same restored state gives the same
output:

1. Progress: for every source partition ``(side, partition)`` the largest
   creation time seen. Records of one partition arrive roughly in creation
   order, so that is how far the partition has been consumed.
2. Matching, one left to at most one right (1 -> 0..1): a record whose partner
   is pending and within ``window_ms`` (on creation time) is emitted as a pair;
   otherwise it waits in state.
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

from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from silver.join.state import JoinState, Pending

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


@dataclass
class _Out:
    rows: list[tuple] = field(default_factory=list)

    def add(self, record: str, rid: str, left: Pending | None, right: Pending | None,
            clock: int | None, expiry: int | None) -> None:  # fmt: skip
        self.rows.append((record, rid, left and left.created, right and right.created,
                          left and left.partition, left and left.offset,
                          right and right.partition, right and right.offset, clock, expiry))  # fmt: skip


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
        out = _Out()
        clock = self.state.clock
        records = ordered[ordered["id"].notna() & ordered["created_ms"].notna()]
        self._match(zip(records["side"].tolist(), records["partition"].tolist(),
                        records["offset"].tolist(), records["id"].tolist(),
                        records["created_ms"].tolist(), strict=True), out, clock)  # fmt: skip
        self._expire(out, clock)
        return pd.DataFrame(out.rows, columns=OUTPUT_COLUMNS)

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

    def _match(self, records: Iterable[tuple], out: _Out, clock: int | None) -> None:
        window = self.params.window_ms
        lefts, rights = self.state.lefts, self.state.rights
        for side, partition, offset, rid, created in records:
            item = Pending(int(created), int(partition), int(offset))
            mine, theirs = (lefts, rights) if side == 0 else (rights, lefts)
            partner = theirs.get(rid)
            if partner is not None and abs(partner.created - item.created) <= window:
                del theirs[rid]
                left, right = (item, partner) if side == 0 else (partner, item)
                out.add("matched", rid, left, right, clock, None)
            elif rid in mine:
                # A replayed or repeated record: the first one keeps its place.
                out.add("duplicate", rid, *((item, None) if side == 0 else (None, item)), clock, None)
            else:
                mine[rid] = item

    def _expire(self, out: _Out, clock: int | None) -> None:
        expiry = self.expiry()
        if expiry is None:
            return
        horizon = expiry - self.params.window_ms
        state = self.state
        for rid in [r for r, item in state.lefts.items() if item.created < horizon]:
            item = state.lefts.pop(rid)
            out.add("unmatched", rid, item, None, clock, expiry)
            state.expired[rid] = expiry
        for rid in [r for r, item in state.rights.items() if item.created < horizon]:
            item = state.rights.pop(rid)
            out.add("late_right" if rid in state.expired else "orphan_right", rid, None, item,
                    clock, expiry)  # fmt: skip
        # Remember expired lefts for one window plus sync-delay of expiry progress: a
        # partner arriving within that is counted late, anything later as an orphan.
        keep = self.params.window_ms + self.params.sync_delay_ms
        for rid in [r for r, when in state.expired.items() if expiry - when > keep]:
            del state.expired[rid]
