"""The serializable state of one join shard (pending records and partition progress).

Stored as Arrow IPC bytes in the ``applyInPandasWithState`` state row: one
table with a row per pending left, pending right and recently expired left id,
and the per-partition progress and stream clock in the schema metadata.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import NamedTuple

import pyarrow as pa

__all__ = ["JoinState", "JoinStateError", "Pending"]

_LEFT, _RIGHT, _EXPIRED = 0, 1, 2
_SCHEMA = pa.schema([("kind", pa.int8()), ("id", pa.string()), ("created_ms", pa.int64()),
                     ("partition", pa.int32()), ("offset", pa.int64())])  # fmt: skip


class JoinStateError(ValueError):
    """State bytes that cannot be decoded."""


class Pending(NamedTuple):
    """A record waiting for its partner."""

    created: int
    partition: int
    offset: int


@dataclass
class JoinState:
    """Pending lefts and rights by id, progress per ``(side, partition)``.

    ``expired`` maps a left id emitted unmatched to the expiry time at which it was.
    """

    lefts: dict[str, Pending] = field(default_factory=dict)
    rights: dict[str, Pending] = field(default_factory=dict)
    expired: dict[str, int] = field(default_factory=dict)
    progress: dict[tuple[int, int], int] = field(default_factory=dict)
    clock: int | None = None

    def size(self) -> int:
        """Entries held (pending lefts + rights + remembered expired ids)."""
        return len(self.lefts) + len(self.rights) + len(self.expired)

    def to_bytes(self) -> bytes:
        """Arrow IPC stream bytes."""
        kinds, ids, created, partitions, offsets = [], [], [], [], []
        for kind, items in ((_LEFT, self.lefts), (_RIGHT, self.rights)):
            for rid, item in items.items():
                kinds.append(kind)
                ids.append(rid)
                created.append(item.created)
                partitions.append(item.partition)
                offsets.append(item.offset)
        for rid, when in self.expired.items():
            kinds.append(_EXPIRED)
            ids.append(rid)
            created.append(when)
            partitions.append(-1)
            offsets.append(-1)
        meta = {"progress": [[s, p, t] for (s, p), t in sorted(self.progress.items())],
                "clock": self.clock}  # fmt: skip
        table = pa.table([kinds, ids, created, partitions, offsets],
                         schema=_SCHEMA.with_metadata({"join": json.dumps(meta)}))  # fmt: skip
        sink = pa.BufferOutputStream()
        with pa.ipc.new_stream(sink, table.schema) as writer:
            writer.write_table(table)
        return sink.getvalue().to_pybytes()

    @classmethod
    def from_bytes(cls, data: bytes) -> JoinState:
        """Decode :meth:`to_bytes` output.

        Raises:
            JoinStateError: the bytes are not a join state.
        """
        try:
            table = pa.ipc.open_stream(data).read_all()
            meta = json.loads(table.schema.metadata[b"join"])
        except (pa.ArrowInvalid, KeyError, TypeError, ValueError) as exc:
            raise JoinStateError(f"cannot decode join state: {exc}") from exc
        state = cls(progress={(int(s), int(p)): int(t) for s, p, t in meta["progress"]},
                    clock=meta["clock"])  # fmt: skip
        columns = table.to_pydict()
        targets = {_LEFT: state.lefts, _RIGHT: state.rights}
        for kind, rid, when, partition, offset in zip(columns["kind"], columns["id"],
                                                       columns["created_ms"], columns["partition"],
                                                       columns["offset"], strict=True):  # fmt: skip
            if kind == _EXPIRED:
                state.expired[rid] = when
            else:
                targets[kind][rid] = Pending(when, partition, offset)
        return state
