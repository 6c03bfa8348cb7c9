"""Read a local Delta table's transaction log: which files each commit added.

The streaming reader needs the rows *added* by table versions ``(start, end]``.
The Delta protocol stores commit ``N`` as ``_delta_log/<N, 20 digits>.json``, one
action per line; its ``add`` actions with ``dataChange: true`` are exactly the
files that commit appended (an OPTIMIZE rewrites with ``dataChange: false``).
Commit files are written atomically (put-if-absent), so a commit whose file
exists is complete. Reading them directly costs one small file per version,
where loading the table with delta-rs at each version would replay the whole
snapshot. Snapshots (batch reads) go through delta-rs' ``get_add_actions``.

Tables are read through their :class:`~core.storage.Storage` (a local folder or
an object store). Limits, reported as :class:`DeltaLogError`: no deletion
vectors; commits removed by log cleanup cannot be streamed.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote, urlparse

import pyarrow as pa

from core.errors import DkgError
from core.packing import greedy_bins
from core.storage import Storage

__all__ = [
    "AddedFile",
    "Commit",
    "DeltaLogError",
    "has_commit",
    "latest_version",
    "newest_version",
    "pack_files",
    "read_commit",
    "snapshot_files",
]

_COMMIT_FILE = re.compile(r"^(\d{20})\.json$")


class DeltaLogError(DkgError, RuntimeError):
    """The transaction log is missing, unreadable, or uses an unsupported feature."""


@dataclass(frozen=True)
class AddedFile:
    """One data file to read, with its partition values already typed.

    Picklable: it travels inside Spark input partitions to the executors.

    Attributes:
        path: The Parquet file's URI (an absolute path for local tables).
        size: File size in bytes (for balancing partitions).
        partition_values: Partition column -> value (Python object or None);
            Delta keeps these in the log, not in the file.
        version: The commit that added the file (-1 when read from a snapshot,
            which does not say).
    """

    path: str
    size: int
    partition_values: Mapping[str, Any] = field(default_factory=dict)
    version: int = -1


@dataclass(frozen=True)
class Commit:
    """The data changes of one table version.

    Attributes:
        version: The table version.
        adds: Files added with ``dataChange: true``.
        removes_data: Whether the commit also removed rows (MERGE, DELETE,
            overwrite), which an append-only stream cannot express.
        transactions: Application id -> the batch id the commit recorded for it.
        user_metadata: The commit's ``userMetadata`` (Delta's free text per commit), if any.
    """

    version: int
    adds: tuple[AddedFile, ...]
    removes_data: bool
    transactions: Mapping[str, int] = field(default_factory=dict)
    user_metadata: str | None = None


def _log_dir(table: str) -> str:
    return f"{table.rstrip('/')}/_delta_log"


def has_commit(storage: Storage, table: str, version: int) -> bool:
    """Whether ``version``'s commit file is in the table's log (one lookup, no listing)."""
    return storage.exists(f"{_log_dir(table)}/{version:020d}.json")


def newest_version(storage: Storage, table: str, known: int) -> int:
    """The newest committed version, given that ``known`` is committed (or -1: none known).

    One lookup per newer commit, and a listing only when no version is known: a
    streaming table's log keeps every commit for the log retention (30 days by
    default), so listing it costs more with each commit.
    """
    if known < 0:
        return latest_version(storage, table)
    while has_commit(storage, table, known + 1):
        known += 1
    return known


def latest_version(storage: Storage, table: str) -> int:
    """The newest committed version, or -1 if there is no table yet.

    Lists ``_delta_log`` instead of loading the table: the newest commit file is
    never removed by log cleanup, and listing is cheap next to a snapshot load.
    """
    names = storage.list_dir(_log_dir(table))
    versions = [int(m.group(1)) for name in names if (m := _COMMIT_FILE.match(name))]
    return max(versions, default=-1)


def _data_file(table: str, raw_path: str) -> str:
    # Log paths are URL-encoded (RFC 2396) and relative to the table root unless
    # they carry a scheme (shallow clones).
    parsed = urlparse(raw_path)
    if parsed.scheme == "file":
        return unquote(parsed.path)
    if parsed.scheme:
        return raw_path
    return f"{table.rstrip('/')}/{unquote(raw_path)}"


def _typed_partition_value(raw: str | None, arrow_type: pa.DataType | None) -> Any:
    if raw is None or arrow_type is None or pa.types.is_string(arrow_type):
        return raw
    try:
        return pa.array([raw], pa.string()).cast(arrow_type)[0].as_py()
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        raise DeltaLogError(f"cannot parse partition value {raw!r} as {arrow_type}") from exc


def _added_file(table: str, add: Mapping[str, Any], types: Mapping[str, pa.DataType],
                version: int) -> AddedFile:  # fmt: skip
    if add.get("deletionVector"):
        raise DeltaLogError(f"{table}: deletion vectors are not supported ({add['path']})")
    values = {
        name: _typed_partition_value(raw, types.get(name))
        for name, raw in (add.get("partitionValues") or {}).items()
    }
    return AddedFile(_data_file(table, add["path"]), int(add.get("size") or 0), values, version)


def read_commit(storage: Storage, table: str, version: int,
                partition_types: Mapping[str, pa.DataType]) -> Commit:  # fmt: skip
    """Parse commit ``version`` of ``table``.

    Args:
        storage: Where the table is.
        table: The table's URI.
        version: The table version to read.
        partition_types: Arrow type of each partition column, to turn the log's
            string partition values into typed values.

    Raises:
        DeltaLogError: The commit file does not exist (never written, or removed
            by log cleanup) or uses an unsupported feature.
    """
    root = table.rstrip("/")
    try:
        lines = storage.read_text(f"{_log_dir(root)}/{version:020d}.json").splitlines()
    except FileNotFoundError:
        raise DeltaLogError(
            f"{root}: commit {version} is not in _delta_log (not written yet, or removed by "
            "log cleanup); restart the stream from a later startingVersion"
        ) from None
    adds: list[AddedFile] = []
    removes_data = False
    transactions: dict[str, int] = {}
    user_metadata = None
    for line in filter(None, map(str.strip, lines)):
        action = json.loads(line)
        if (add := action.get("add")) is not None and add.get("dataChange", True):
            adds.append(_added_file(root, add, partition_types, version))
        elif (remove := action.get("remove")) is not None and remove.get("dataChange", True):
            removes_data = True
        elif (txn := action.get("txn")) is not None:
            transactions[txn["appId"]] = int(txn["version"])
        elif (info := action.get("commitInfo")) is not None:
            user_metadata = info.get("userMetadata")
    return Commit(version, tuple(adds), removes_data, transactions, user_metadata)


def snapshot_files(storage: Storage, table: str, version: int | None = None) -> list[AddedFile]:
    """Every live data file of the table (at ``version``, default latest), via delta-rs."""
    from deltalake import DeltaTable

    root = table.rstrip("/")
    delta = DeltaTable(root, version=version, storage_options=storage.delta_options())
    actions = pa.table(delta.get_add_actions(flatten=True))
    prefix = "partition."
    partition_cols = [c for c in actions.column_names if c.startswith(prefix)]
    rows = actions.select(["path", "size_bytes", *partition_cols]).to_pylist()
    return [
        AddedFile(
            _data_file(root, row["path"]),
            int(row["size_bytes"]),
            {c[len(prefix) :]: row[c] for c in partition_cols},
        )
        for row in rows
    ]


def pack_files(
    files: Sequence[AddedFile], min_partitions: int = 2, target_bytes: int = 64 << 20
) -> list[tuple[AddedFile, ...]]:
    """Group files into balanced partitions (one Spark task each).

    Streaming tables accumulate one small file per micro-batch; a task per file
    would spend more time starting Python workers than reading. Aim for
    ``target_bytes`` per partition but at least ``min_partitions`` partitions, so
    a few large files still spread over the cores. Greedy largest-first bin
    packing; files keep their log order inside a partition.
    """
    if not files:
        return []
    total = sum(f.size for f in files)
    count = min(len(files), max(min_partitions, math.ceil(total / target_bytes)))
    return [tuple(files[i] for i in b) for b in greedy_bins([f.size for f in files], count)]
