"""The serializable state of one join shard (pending records and partition progress).

Pending lefts and rights are columnar (pandas frames ``id, created_ms,
partition, offset``), so a batch joins them with vectorized merges and the
snapshot is one Arrow conversion, not a Python loop. Stored as Arrow IPC bytes
in the ``applyInPandasWithState`` state row: one table with a row per pending
left, pending right and recently expired left id, and the per-partition
progress and the stream clock in the schema metadata.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import pyarrow as pa

from core.errors import DkgError

__all__ = ["PENDING_COLUMNS", "JoinState", "JoinStateError", "empty_pending"]

PENDING_COLUMNS = ["id", "created_ms", "partition", "offset"]
_LEFT, _RIGHT, _EXPIRED = 0, 1, 2
_SCHEMA = pa.schema([("kind", pa.int8()), ("id", pa.string()), ("created_ms", pa.int64()),
                     ("partition", pa.int32()), ("offset", pa.int64())])  # fmt: skip


class JoinStateError(DkgError, ValueError):
    """State bytes that cannot be decoded."""


def empty_pending() -> pd.DataFrame:
    """A frame of no pending records, with the right dtypes."""
    return pd.DataFrame({"id": pd.Series(dtype=object), "created_ms": pd.Series(dtype=np.int64),
                         "partition": pd.Series(dtype=np.int32),
                         "offset": pd.Series(dtype=np.int64)})  # fmt: skip


def _empty_expired() -> pd.DataFrame:
    return pd.DataFrame({"id": pd.Series(dtype=object), "expiry_ms": pd.Series(dtype=np.int64)})


@dataclass
class JoinState:
    """Pending lefts and rights (unique ids), expired left ids, progress per ``(side, partition)``.

    ``expired`` holds left ids emitted unmatched with the expiry time at which they were.
    """

    lefts: pd.DataFrame = field(default_factory=empty_pending)
    rights: pd.DataFrame = field(default_factory=empty_pending)
    expired: pd.DataFrame = field(default_factory=_empty_expired)
    progress: dict[tuple[int, int], int] = field(default_factory=dict)
    clock: int | None = None

    def size(self) -> int:
        """Entries held (pending lefts + rights + remembered expired ids)."""
        return len(self.lefts) + len(self.rights) + len(self.expired)

    def to_bytes(self) -> bytes:
        """Arrow IPC stream bytes."""
        expired = self.expired.rename(columns={"expiry_ms": "created_ms"}).assign(
            partition=-1, offset=-1
        )
        parts = [frame.assign(kind=kind) for kind, frame in
                 ((_LEFT, self.lefts), (_RIGHT, self.rights), (_EXPIRED, expired))]  # fmt: skip
        frame = pd.concat([p for p in parts if not p.empty] or [parts[0]], ignore_index=True)
        meta = {"progress": [[s, p, t] for (s, p), t in sorted(self.progress.items())],
                "clock": self.clock}  # fmt: skip
        table = pa.Table.from_pandas(frame[_SCHEMA.names], schema=_SCHEMA, preserve_index=False)
        table = table.replace_schema_metadata({"join": json.dumps(meta)})
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
            return cls._decode(data)
        # Arrow IO errors are OSErrors; a retyped column or bad metadata any of the rest.
        except (pa.ArrowException, OSError, KeyError, TypeError, ValueError) as exc:
            raise JoinStateError(f"cannot decode join state: {exc}") from exc

    @classmethod
    def _decode(cls, data: bytes) -> JoinState:
        table = pa.ipc.open_stream(data).read_all()
        # IPC carries no checksum: a changed byte can leave offsets pointing outside
        # their buffers, which to_pandas reads unchecked (a segmentation fault).
        table.validate(full=True)
        if not table.schema.equals(_SCHEMA):
            raise ValueError(f"columns {table.schema.names} are not those of a join state")
        meta = json.loads(table.schema.metadata[b"join"])
        progress = {(int(s), int(p)): int(t) for s, p, t in meta["progress"]}
        clock = meta["clock"]
        if clock is not None and type(clock) is not int:
            raise ValueError(f"clock {clock!r} is not an integer")
        frame = table.to_pandas()
        kind = frame.pop("kind").to_numpy()

        def pending(which: int) -> pd.DataFrame:
            rows = frame[kind == which].reset_index(drop=True)
            return rows.astype({"partition": np.int32, "offset": np.int64, "created_ms": np.int64})

        expired = frame[kind == _EXPIRED][["id", "created_ms"]].reset_index(drop=True)
        return cls(lefts=pending(_LEFT), rights=pending(_RIGHT),
                   expired=expired.rename(columns={"created_ms": "expiry_ms"}).astype(
                       {"expiry_ms": np.int64}),
                   progress=progress, clock=clock)  # fmt: skip

    def equals(self, other: JoinState) -> bool:
        """Same pending records, expired ids, progress and clock."""

        def same(a: pd.DataFrame, b: pd.DataFrame) -> bool:
            return a.reset_index(drop=True).equals(b.reset_index(drop=True))

        return (same(self.lefts, other.lefts) and same(self.rights, other.rights)
                and same(self.expired, other.expired) and self.progress == other.progress
                and self.clock == other.clock)  # fmt: skip
