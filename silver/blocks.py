"""Silver's transport through Spark: a splitter's rows as Arrow IPC blocks.

The routing step needs each splitter's messages in one Python call, so silver
shuffles by splitter. Shuffled as rows, every message was converted from Arrow
to a Spark row, hashed, serialized, sorted by group, converted back to Arrow
for the routing step, its output converted to rows again and once more to Arrow
for the driver: most of silver's CPU, for work that is Python's on both ends.
Packed, a micro-batch crosses the shuffle as a few rows per splitter, each
holding up to :data:`BLOCK_ROWS` rows as one Arrow IPC stream, and Spark still
does what it is for here: grouping by splitter, the state store, the
checkpoints and the scheduling.

Pure functions (pyarrow only): they run on executors and on the driver alike.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["BLOCK_ROWS", "BRONZE", "BRONZE_BLOCKS_ARROW", "BRONZE_BLOCKS_DDL", "FILES", "ROUTED",
           "ROUTED_BLOCKS_ARROW", "ROUTED_BLOCKS_DDL", "TUPLES", "bronze_blocks", "files_block",
           "group_blocks", "pack", "pack_table", "unpack"]  # fmt: skip

BLOCK_ROWS = 50_000  # a few MB per block: well inside Arrow's 2 GB per binary column
# Packed rows of a ``kind`` for one splitter; ``splitter_group`` is the key silver groups by.
BRONZE_BLOCKS_DDL = "splitter_group INT, splitter INT, kind STRING, rows LONG, block BINARY"
BRONZE_BLOCKS_ARROW = pa.schema([("splitter_group", pa.int32()), ("splitter", pa.int32()),
                                 ("kind", pa.string()), ("rows", pa.int64()),
                                 ("block", pa.binary())])  # fmt: skip
# The routing step's output, the workers' input: packed rows of a ``kind``, each
# bound for the worker group (its grouping key) that reads or passes it on.
ROUTED_BLOCKS_DDL = "worker_group INT, kind STRING, rows LONG, block BINARY"
ROUTED_BLOCKS_ARROW = pa.schema([("worker_group", pa.int32()), ("kind", pa.string()),
                                 ("rows", pa.int64()), ("block", pa.binary())])  # fmt: skip
# A quarter of the bytes for the JVM to copy through Arrow, rows, the shuffle and back, for
# about 2 ms of Python per 50,000 messages; in the calling thread, as each core runs a task.
_PACKED = pa.ipc.IpcWriteOptions(compression="lz4", use_threads=False)
BRONZE = "bronze"
"""A splitter's bronze rows (``silver.schemas.BRONZE_INPUT`` columns), to route."""
TUPLES = "tuples"
"""One worker's routed tuples (``silver.workers.WORKER_INPUT_ARROW``)."""
ROUTED = "routed"
"""A splitter's routing output (``silver.schemas.ROUTED_ARROW``), for the silver tables."""
FILES = "files"
"""Files a step wrote in its task (``core.tables.task_files.TASK_FILES_ARROW``), to commit."""


def pack(batch: pa.RecordBatch | pa.Table) -> bytes:
    """One Arrow IPC stream holding ``batch``, LZ4-compressed."""
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, batch.schema, options=_PACKED) as writer:
        writer.write(batch)
    return sink.getvalue().to_pybytes()


def pack_table(table: pa.Table) -> list[bytes]:
    """``table`` in blocks of at most :data:`BLOCK_ROWS` rows (one empty block if empty)."""
    return [pack(batch) for batch in table.to_batches(max_chunksize=BLOCK_ROWS)] or [pack(table)]


def unpack(blocks: Iterable[bytes], schema: pa.Schema | None = None) -> pa.Table:
    """The rows of ``blocks``, in order, as one table (``schema`` if there are none)."""
    tables = [pa.ipc.open_stream(block).read_all() for block in blocks]
    if not tables:
        if schema is None:
            raise ValueError("no blocks to unpack and no schema for an empty table")
        return schema.empty_table()
    return pa.concat_tables(tables)


def group_blocks(table: pa.Table, groups: np.ndarray, group_keys: Sequence[int],
                 schema: pa.Schema) -> pa.RecordBatch:  # fmt: skip
    """One block row per group number present in ``groups`` (aligned with ``table``'s rows).

    Returns rows of ``schema``: the group's grouping key, its number, its row
    count and the packed rows, in blocks of at most :data:`BLOCK_ROWS`.
    """
    out: list[list] = [[], [], [], []]
    order = np.argsort(groups, kind="stable")
    ordered = groups[order]
    edges = [0, *(np.flatnonzero(np.diff(ordered)) + 1).tolist(), len(groups)] if len(groups) else []
    if len(edges) > 2:  # several groups: one copy puts each one's rows together, in order
        table = table.take(order)  # (a Kafka range is one partition, so one splitter: no copy)
    for begin, end in itertools.pairwise(edges):
        number = int(ordered[begin])
        for batch in table.slice(begin, end - begin).to_batches(BLOCK_ROWS):
            for column, value in zip(out, (group_keys[number], number, batch.num_rows,
                                           pack(batch)), strict=True):  # fmt: skip
                column.append(value)
    return pa.RecordBatch.from_arrays([pa.array(c, f.type) for c, f in zip(out, schema, strict=True)],
                                      schema=schema)  # fmt: skip


def bronze_blocks(rows: pa.RecordBatch | pa.Table, splitters: int, group_keys: Sequence[int],
                  run_id: str | None = None) -> pa.RecordBatch:  # fmt: skip
    """Bronze rows -> one block row per splitter present (``BRONZE_BLOCKS_DDL``).

    Args:
        rows: bronze columns, ``partition`` and ``run_id`` among them.
        splitters: the number of splitters; a row's is ``partition % splitters``.
        group_keys: the grouping key of each splitter.
        run_id: keep only this run's rows (None: all).
    """
    table = pa.Table.from_batches([rows]) if isinstance(rows, pa.RecordBatch) else rows
    if run_id is not None:
        table = table.filter(pc.equal(table["run_id"], run_id))
    splitter = table["partition"].to_numpy() % splitters
    table = table.append_column("splitter", pa.array(splitter, pa.int32()))
    blocks = group_blocks(table, splitter, group_keys, _SPLITTER_BLOCKS_ARROW)
    return pa.RecordBatch.from_arrays(
        [blocks.column("splitter_group"), blocks.column("splitter"),
         pa.repeat(pa.scalar(BRONZE), blocks.num_rows), blocks.column("rows"),
         blocks.column("block")], schema=BRONZE_BLOCKS_ARROW)  # fmt: skip


def files_block(files: pa.RecordBatch, splitter: int, splitter_group: int) -> pa.RecordBatch:
    """Files a read task wrote (``TASK_FILES_ARROW`` rows), as a ``files`` row for ``splitter``.

    Its routing step passes them on to the silver query's writer, which commits them.
    """
    return pa.RecordBatch.from_pylist(
        [{"splitter_group": splitter_group, "splitter": splitter, "kind": FILES,
          "rows": files.num_rows, "block": pack(files)}], schema=BRONZE_BLOCKS_ARROW)  # fmt: skip


_SPLITTER_BLOCKS_ARROW = pa.schema([("splitter_group", pa.int32()), ("splitter", pa.int32()),
                                    ("rows", pa.int64()), ("block", pa.binary())])  # fmt: skip
