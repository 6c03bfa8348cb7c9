"""Rows written as one Parquet file per Delta partition, ready to be committed by name.

delta-rs' ``write_deltalake`` plans every write through DataFusion and, to replace
rows, first finds the files its predicate matches. Gold writes a few small
partitions (its windows) four times a refresh, and there that planning costs more
than the data: one commit of a few rows took about 7.5 ms of CPU, against 5 when
the files are written with pyarrow and committed by name (100 commits to one
table, measured). :class:`~core.tables.delta_rs.DeltaRsBackend` takes this way
for appends to a partitioned table and for replacements of whole partitions.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from deltalake.transaction import AddAction

from core.storage import Storage

__all__ = ["add_action", "partition_string", "plain_partitions", "write_partition_files"]


def add_action(name: str, size: int, rows: int, now_ms: int,
               partition_values: dict[str, str | None] | None = None) -> AddAction:  # fmt: skip
    """The Delta add action of a new data file in the table's folder, its row count as stats."""
    return AddAction(name, size, partition_values or {}, now_ms, True,
                     json.dumps({"numRecords": rows}))  # fmt: skip


def plain_partitions(schema: pa.Schema, columns: Sequence[str]) -> bool:
    """Whether every one of ``columns`` is a string or integer column of ``schema``.

    Those are the partition values whose Delta string form is plain ``str()``;
    dates, times and decimals have their own and are left to delta-rs.
    """
    types = [schema.field(name).type for name in columns if name in schema.names]
    return len(types) == len(columns) and all(
        pa.types.is_string(kind) or pa.types.is_integer(kind) for kind in types
    )


def partition_string(value: Any) -> str | None:
    """A string or integer partition value as the Delta log spells it (None stays null)."""
    return None if value is None else str(value)


def _rows_of(data: pa.Table, columns: Sequence[str], values: dict[str, Any]) -> pa.Table:
    mask = None
    for name in columns:
        column = data[name]
        match = pc.is_null(column) if values[name] is None else pc.equal(column, values[name])
        mask = match if mask is None else pc.and_(mask, match)
    return data.filter(mask)


def _partitions(
    data: pa.Table, columns: Sequence[str]
) -> Iterator[tuple[dict[str, Any], pa.Table]]:
    """Each partition's values and rows.

    Gold's rows vary in one partition column at most (the run is one value), so its
    few windows are masked out one by one; a grouping of the whole table costs
    more than that (measured per gold refresh, docs/benchmarks.md).
    """
    if data.num_rows == 0:
        return
    distinct = {name: pc.unique(data[name]).to_pylist() for name in columns}
    varying = [name for name in columns if len(distinct[name]) > 1]
    if len(varying) > 1:
        for values in data.select(list(columns)).group_by(list(columns)).aggregate([]).to_pylist():
            yield values, _rows_of(data, columns, values)
        return
    fixed = {name: distinct[name][0] for name in columns if name not in varying}
    if not varying:
        yield fixed, data
        return
    (column,) = varying
    for value in distinct[column]:
        yield {**fixed, column: value}, _rows_of(data, [column], {column: value})


def write_partition_files(storage: Storage, table: str, data: pa.Table,
                          partition_by: Sequence[str], file_schema: pa.Schema) -> list[AddAction]:  # fmt: skip
    """Write ``data`` into the table's folder, one new file per partition; their add actions.

    Args:
        storage: where the table is.
        table: the table's URI.
        data: rows with every column of the table, partition columns included.
        partition_by: the table's partition columns.
        file_schema: the table's other columns, as its files hold them.

    The files are new (random names) and stay unread until a commit names them.
    """
    now_ms = int(time.time() * 1000)
    actions = []
    for values, rows in _partitions(data, partition_by):
        rows = rows.select(file_schema.names)
        if rows.schema != file_schema:
            rows = rows.cast(file_schema)
        name = f"part-{uuid.uuid4()}.snappy.parquet"
        # Straight into the new file (a stream, not a path: resolving a path's
        # filesystem cost more than writing a window's rows). A file cut short is
        # named by no commit, so it is never read.
        with storage.filesystem.open_output_stream(storage.fs_path(f"{table}/{name}")) as out:
            pq.write_table(rows, out, compression="snappy")
            size = out.tell()
        actions.append(add_action(name, size, rows.num_rows, now_ms,
                                  {k: partition_string(v) for k, v in values.items()}))  # fmt: skip
    return actions
