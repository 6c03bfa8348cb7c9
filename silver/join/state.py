"""The serializable state of one join shard (pending records and partition progress).

Pending lefts and rights are Arrow tables (``id, created_ms, partition,
offset``), so a batch joins them with Arrow's hash lookups and the snapshot is
one IPC write, with no row-by-row step and no Python string per record. Stored
as Arrow IPC bytes in the ``applyInPandasWithState`` state row: one table with
a row per pending left, pending right and recently expired left id, and the
per-partition progress and the stream clock in the schema metadata.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import pyarrow as pa
import pyarrow.compute as pc

from core.errors import DkgError
from silver.join.schemas import PARSED_ARROW

__all__ = ["EXPIRED_ARROW", "PENDING_ARROW", "PENDING_COLUMNS", "JoinState", "JoinStateError"]

PENDING_ARROW = pa.schema([PARSED_ARROW.field(name) for name in ("id", "created_ms", "partition",
                                                                   "offset")])  # fmt: skip
PENDING_COLUMNS = PENDING_ARROW.names
EXPIRED_ARROW = pa.schema([("id", pa.string()), ("expiry_ms", pa.int64())])
"""Left ids emitted unmatched, with the expiry time at which they were."""
_LEFT, _RIGHT, _EXPIRED = 0, 1, 2
_SCHEMA = pa.schema([("kind", pa.int8()), *PENDING_ARROW])


class JoinStateError(DkgError, ValueError):
    """State bytes that cannot be decoded."""


@dataclass
class JoinState:
    """Pending lefts and rights (unique ids), expired left ids, progress per ``(side, partition)``."""

    lefts: pa.Table = field(default_factory=PENDING_ARROW.empty_table)
    rights: pa.Table = field(default_factory=PENDING_ARROW.empty_table)
    expired: pa.Table = field(default_factory=EXPIRED_ARROW.empty_table)
    progress: dict[tuple[int, int], int] = field(default_factory=dict)
    clock: int | None = None

    def size(self) -> int:
        """Entries held (pending lefts + rights + remembered expired ids)."""
        return self.lefts.num_rows + self.rights.num_rows + self.expired.num_rows

    def to_bytes(self) -> bytes:
        """Arrow IPC stream bytes."""
        expired = self.expired
        expired = pa.table([expired["id"], expired["expiry_ms"],
                            pa.repeat(pa.scalar(-1, pa.int32()), expired.num_rows),
                            pa.repeat(pa.scalar(-1, pa.int64()), expired.num_rows)],
                           schema=PENDING_ARROW)  # fmt: skip
        parts = [pa.table([pa.repeat(pa.scalar(kind, pa.int8()), part.num_rows), *part.columns],
                          schema=_SCHEMA)
                 for kind, part in ((_LEFT, self.lefts), (_RIGHT, self.rights), (_EXPIRED, expired))]  # fmt: skip
        meta = {"progress": [[s, p, t] for (s, p), t in sorted(self.progress.items())],
                "clock": self.clock}  # fmt: skip
        table = pa.concat_tables(parts).combine_chunks().replace_schema_metadata(
            {"join": json.dumps(meta)})
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
        # their buffers, which Arrow's kernels read unchecked (a segmentation fault).
        table.validate(full=True)
        if not table.schema.equals(_SCHEMA):
            raise ValueError(f"columns {table.schema.names} are not those of a join state")
        if any(column.null_count for column in table.columns):
            raise ValueError("a join state's columns hold no nulls")
        meta = json.loads(table.schema.metadata[b"join"])
        progress = {(int(s), int(p)): int(t) for s, p, t in meta["progress"]}
        clock = meta["clock"]
        if clock is not None and type(clock) is not int:
            raise ValueError(f"clock {clock!r} is not an integer")
        table = table.replace_schema_metadata(None)

        def rows(kind: int) -> pa.Table:
            return table.filter(pc.equal(table["kind"], kind)).drop_columns(["kind"])

        expired = rows(_EXPIRED)
        return cls(lefts=rows(_LEFT), rights=rows(_RIGHT),
                   expired=pa.table([expired["id"], expired["created_ms"]], schema=EXPIRED_ARROW),
                   progress=progress, clock=clock)  # fmt: skip

    def equals(self, other: JoinState) -> bool:
        """Same pending records, expired ids, progress and clock."""
        return (self.lefts.equals(other.lefts) and self.rights.equals(other.rights)
                and self.expired.equals(other.expired) and self.progress == other.progress
                and self.clock == other.clock)  # fmt: skip
