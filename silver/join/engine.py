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
   Arrow hash lookups over the batch, not a Python step per record.
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
import pyarrow as pa
import pyarrow.compute as pc

from silver.join.schemas import OPERATOR_ARROW, PARSED_ARROW, table_of
from silver.join.state import EXPIRED_ARROW, PENDING_COLUMNS, JoinState

__all__ = ["INPUT_ARROW", "OFFSET_ORDER", "OUTPUT_ARROW", "OUTPUT_COLUMNS", "JoinEngine",
           "JoinParams"]

INPUT_ARROW = pa.schema([field for field in PARSED_ARROW if field.name != "error"])
"""A batch's rows as :meth:`JoinEngine.process` reads them (other columns are ignored)."""
OUTPUT_COLUMNS = ["record", "id", "left_created_ms", "right_created_ms", "left_partition",
                  "left_offset", "right_partition", "right_offset", "clock_ms", "expiry_ms"]  # fmt: skip
OUTPUT_ARROW = pa.schema([OPERATOR_ARROW.field(name) for name in OUTPUT_COLUMNS])
OFFSET_ORDER = [("side", "ascending"), ("partition", "ascending"), ("offset", "ascending")]
"""Rows in the order their topics hold them: by side, partition and offset."""


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


def _side_rows(side: str, record: pa.Array, pending: pa.Table) -> pa.Table:
    """Pending records of one side (``left`` or ``right``) as output rows."""
    return table_of(OUTPUT_ARROW, pending.num_rows, record=record, id=pending["id"],
                   **{f"{side}_created_ms": pending["created_ms"],
                      f"{side}_partition": pending["partition"],
                      f"{side}_offset": pending["offset"]})  # fmt: skip


def _add(pending: pa.Table, new: pa.Table) -> tuple[pa.Table, pa.Table]:
    """Pending records plus new ones; a repeated id keeps its first record, the rest are duplicates."""
    if not new.num_rows:
        return pending, new
    combined = pa.concat_tables([pending, new]) if pending.num_rows else new
    ids = combined["id"]
    # index_in gives each id the position of its first occurrence in the set.
    first = pc.equal(pc.index_in(ids, value_set=ids), pa.array(np.arange(len(ids))))
    return combined.filter(first), combined.filter(pc.invert(first))


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

    def process(self, rows: pa.Table) -> pa.Table:
        """Process one batch (``INPUT_ARROW`` columns, any order: it is sorted first).

        Returns:
            The emitted rows (:data:`OUTPUT_ARROW`).
        """
        rows = rows.select(INPUT_ARROW.names).cast(INPUT_ARROW)
        ordered = rows.take(pc.sort_indices(rows, OFFSET_ORDER))  # a stable sort
        self._advance(ordered)
        records = ordered.filter(pc.and_(pc.is_valid(ordered["id"]),
                                         pc.is_valid(ordered["created_ms"])))  # fmt: skip
        state = self.state
        state.lefts, left_dups = _add(state.lefts, _side(records, 0))
        state.rights, right_dups = _add(state.rights, _side(records, 1))
        # A record repeated while its first copy still waits (a replay): the first keeps its place.
        out = [_side_rows("left", pa.repeat("duplicate", left_dups.num_rows), left_dups),
               _side_rows("right", pa.repeat("duplicate", right_dups.num_rows), right_dups),
               self._match()]  # fmt: skip
        expiry = self.expiry()
        if expiry is not None:
            out.extend(self._expire(expiry))
        emitted = pa.concat_tables(out)
        clock = pa.repeat(pa.scalar(state.clock, pa.int64()), emitted.num_rows)
        return emitted.set_column(OUTPUT_COLUMNS.index("clock_ms"), "clock_ms", clock)

    def _advance(self, rows: pa.Table) -> None:
        timed = rows.filter(pc.is_valid(rows["created_ms"]))
        if not timed.num_rows:
            return
        latest = timed.group_by(["side", "partition"]).aggregate([("created_ms", "max")])
        progress = self.state.progress
        for side, partition, created in zip(*(latest[name].to_pylist() for name in
                                              ("side", "partition", "created_ms_max")), strict=True):  # fmt: skip
            key = (side, partition)
            progress[key] = max(progress.get(key, -(1 << 62)), created)
        # The stream clock counts records only: a closing heartbeat far in the
        # future must not inflate the latency of what it flushes.
        newest = pc.max(timed.filter(pc.is_valid(timed["id"]))["created_ms"]).as_py()
        if newest is not None:
            clock = self.state.clock
            self.state.clock = newest if clock is None else max(clock, newest)

    def _match(self) -> pa.Table:
        state = self.state
        lefts, rights = state.lefts, state.rights
        # Each left's right, by position (ids are unique on each side), -1 for none.
        partner = pc.fill_null(pc.index_in(lefts["id"], value_set=rights["id"]), -1).to_numpy()
        found = partner >= 0
        near = np.zeros(lefts.num_rows, dtype=bool)
        near[found] = np.abs(rights["created_ms"].to_numpy()[partner[found]]
                             - lefts["created_ms"].to_numpy()[found]) <= self.params.window_ms  # fmt: skip
        pairs, right = lefts.filter(near), rights.take(partner[near])
        if pairs.num_rows:
            unpaired = np.ones(rights.num_rows, dtype=bool)
            unpaired[partner[near]] = False
            state.lefts, state.rights = lefts.filter(~near), rights.filter(unpaired)
        return table_of(OUTPUT_ARROW, pairs.num_rows, record=pa.repeat("matched", pairs.num_rows),
                        id=pairs["id"], left_created_ms=pairs["created_ms"],
                        right_created_ms=right["created_ms"], left_partition=pairs["partition"],
                        left_offset=pairs["offset"], right_partition=right["partition"],
                        right_offset=right["offset"])  # fmt: skip

    def _expire(self, expiry: int) -> list[pa.Table]:
        state = self.state
        horizon = expiry - self.params.window_ms
        old = pc.less(state.lefts["created_ms"], horizon)
        unmatched, state.lefts = state.lefts.filter(old), state.lefts.filter(pc.invert(old))
        if unmatched.num_rows:
            gone = pa.table([unmatched["id"], pa.repeat(expiry, unmatched.num_rows)],
                            schema=EXPIRED_ARROW)  # fmt: skip
            state.expired = pa.concat_tables([state.expired, gone])
        old = pc.less(state.rights["created_ms"], horizon)
        leftover, state.rights = state.rights.filter(old), state.rights.filter(pc.invert(old))
        late = pc.is_in(leftover["id"], value_set=state.expired["id"])
        # Remember expired lefts for one window plus sync-delay of expiry progress: a
        # partner arriving within that is counted late, anything later as an orphan.
        keep = self.params.window_ms + self.params.sync_delay_ms
        state.expired = state.expired.filter(pc.greater_equal(state.expired["expiry_ms"], expiry - keep))
        rows = [_side_rows("left", pa.repeat("unmatched", unmatched.num_rows), unmatched),
                _side_rows("right", pc.if_else(late, "late_right", "orphan_right"), leftover)]  # fmt: skip
        return [row.set_column(OUTPUT_COLUMNS.index("expiry_ms"), "expiry_ms",
                               pa.repeat(expiry, row.num_rows)) for row in rows]


def _side(records: pa.Table, side: int) -> pa.Table:
    """The pending columns of one side's records."""
    return records.filter(pc.equal(records["side"], side)).select(PENDING_COLUMNS)
