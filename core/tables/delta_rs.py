"""The embedded Delta backend: delta-rs (``deltalake``), no JVM jars needed.

Each write carries ``CommitProperties(app_transactions=[Transaction(app_id,
batch_id)])``, so the commit records the pair in a ``txn`` action. Before
writing, the backend reads ``DeltaTable.transaction_version(app_id)`` and skips
the batch when it is already ``>= batch_id``. The check and the write are not one
atomic step; that is enough for foreachBatch, where one query drives one
``app_id`` and runs its micro-batches one at a time.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pyarrow as pa
from deltalake import (
    CommitProperties,
    DeltaTable,
    PostCommitHookProperties,
    Transaction,
    write_deltalake,
)
from deltalake.exceptions import TableNotFoundError

from core.profiling import timed
from core.storage import Storage
from core.tables.base import (
    DataFile,
    TableData,
    TableError,
    TablePath,
    as_nullable,
    to_arrow,
    where_predicate,
)
from core.tables.delta_log import has_commit
from core.tables.partition_files import (
    add_action,
    partition_string,
    plain_partitions,
    write_partition_files,
)

__all__ = ["DataFile", "DeltaRsBackend"]

logger = logging.getLogger(__name__)


# Delta's own default (delta-rs writes one every 100 commits): every commit, and every
# reader's update, replays the JSON commits since the last checkpoint, so a streaming
# table's commit costs half as much on average (6.4 against 12.7 ms of CPU, measured).
_TABLE_PROPERTIES = {"delta.checkpointInterval": "10"}

# Commits a held table may follow before it is loaded afresh (its newest checkpoint
# and the commits after it). Fewer keeps less state held; more loads cost little
# (1,000 appends to one table, checkpoints every 100 commits: 15.5 CPU-s loading
# afresh every 100 commits, 17.5 every 20, 21.1 every 5; a shared machine).
_COMMITS_PER_LOAD = 20


# delta-rs runs its expired-log cleanup after every commit unless told otherwise: 0.7
# of 3.3 ms of CPU per commit of a small table (200 commits with and without). Expired
# means older than the log retention (30 days by default), so doing it once every 100
# commits leaves the log no longer.
_CLEANUP_EVERY = 100


def _hooks(table: DeltaTable | None) -> PostCommitHookProperties | None:
    """After a commit to ``table``: its checkpoint when due, a log cleanup only now and then."""
    if table is None:  # a new table: delta-rs' defaults
        return None
    cleanup = (table.version() + 1) % _CLEANUP_EVERY == 0
    return PostCommitHookProperties(create_checkpoint=True, cleanup_expired_logs=cleanup)


def _local_folder(path: TablePath) -> bool:
    # The path says where the table is: options may be empty for an object store
    # whose credentials come from the environment or an instance profile.
    return len(urlparse(str(path)).scheme) <= 1  # none, or a Windows drive letter


def _plain_partitions(table: DeltaTable | None, data: pa.Table) -> list[str]:
    """The table's partition columns when it has some and all are strings or integers, else []."""
    if table is None:
        return []
    partitions = list(table.metadata().partition_columns)
    return partitions if partitions and plain_partitions(data.schema, partitions) else []


def _quote(column: str) -> str:
    # Double quotes keep DataFusion from lower-casing mixed-case column names.
    return '"' + column.replace('"', '""') + '"'


class DeltaRsBackend:
    """Delta table I/O through delta-rs; implements ``TableBackend``.

    Args:
        storage_options: Passed to delta-rs (object-store credentials etc.).
    """

    commits_task_files = True  # tasks write Parquet; add_files commits their names

    def __init__(self, storage_options: dict[str, str] | None = None) -> None:
        """Create the backend (no I/O)."""
        self._storage = storage_options
        self._tables: dict[str, DeltaTable] = {}
        self._loaded_at: dict[str, int] = {}  # the version each table was loaded at
        # Per table: app id -> (table version, its last batch id there); see _last_batch.
        self._last_batches: dict[str, dict[str, tuple[int, int | None]]] = {}
        self._locks: dict[str, threading.RLock] = {}

    @contextmanager
    def _open(self, path: TablePath) -> Iterator[DeltaTable | None]:
        """The table at ``path`` (None if there is none), brought up to date, held for the block.

        Loading a table replays its log; streaming queries commit every second,
        so each table stays loaded and only reads the commits made since
        (``update_incremental``). A loaded table keeps state from every commit it
        followed or made, though (measured: ~90 KB of resident memory per commit,
        and each write slower than the last), so once it has moved on
        :data:`_COMMITS_PER_LOAD` versions it is loaded afresh, from its newest
        checkpoint. The queries' writers and the gold refresh run on different
        threads: a lock per table keeps them off one object at once.
        """
        key = str(path)
        with self._locks.setdefault(key, threading.RLock()):
            table = self._tables.get(key)
            if table is not None:
                # Two lookups instead of a listing of the whole log, which grows with every
                # commit: a next commit means news; a missing current one, a replaced table
                # (log cleanup never removes the newest commit).
                storage, version = Storage(key, dict(self._storage or {})), table.version()
                if version - self._loaded_at[key] >= _COMMITS_PER_LOAD:
                    table = None
                elif has_commit(storage, key, version + 1):
                    table.update_incremental()
                elif not has_commit(storage, key, version):
                    table = None
            if table is None:
                self._tables.pop(key, None)
                self._last_batches.pop(key, None)
                try:
                    table = DeltaTable(key, storage_options=self._storage)
                except TableNotFoundError:
                    table = None
                else:
                    self._tables[key], self._loaded_at[key] = table, table.version()
            yield table

    def _already_written(self, path: TablePath, table: DeltaTable | None, app_id: str,
                         batch_id: int) -> bool:  # fmt: skip
        if table is None:
            return False
        last = self._last_batch(path, table, app_id)
        if last is not None and last >= batch_id:
            logger.info("skip batch %d of %s: already written (last %d)", batch_id, app_id, last)
            return True
        return False

    def _last_batch(self, path: TablePath, table: DeltaTable, app_id: str) -> int | None:
        """``table.transaction_version(app_id)``, remembered per table version.

        delta-rs answers by replaying the log's transactions (1 ms of CPU, measured),
        and every write asks before it commits; the answer changes only with a commit.
        """
        known = self._last_batches.setdefault(str(path), {})
        version = table.version()
        if app_id in known and known[app_id][0] == version:
            return known[app_id][1]
        last = table.transaction_version(app_id)
        known[app_id] = (version, last)
        return last

    @contextmanager
    def _recording(self, path: TablePath, table: DeltaTable | None, app_id: str, batch_id: int,
                   user_metadata: str | None = None) -> Iterator[CommitProperties]:  # fmt: skip
        """The properties of a commit recording ``batch_id`` (and ``user_metadata``, Delta's
        ``commitInfo.userMetadata``); once it is made, the batch is remembered.

        It is remembered at the version the commit should have made. Another writer's
        commit first puts ours later: the table's version then differs from the one
        remembered, and ``_last_batch`` asks the log again.
        """
        before = None if table is None else table.version()
        yield CommitProperties(
            app_transactions=[Transaction(app_id=app_id, version=batch_id)],
            custom_metadata=None if user_metadata is None else {"userMetadata": user_metadata},
        )
        if before is not None:  # a new table is loaded afresh, and asked, next time
            self._last_batches.setdefault(str(path), {})[app_id] = (before + 1, batch_id)

    def version(self, path: TablePath) -> int | None:
        """The latest version, or None if there is no table."""
        with self._open(path) as table:
            return None if table is None else table.version()

    def transaction_version(self, path: TablePath, app_id: str) -> int | None:
        """The last batch id recorded for ``app_id``, or None."""
        with self._open(path) as table:
            return None if table is None else self._last_batch(path, table, app_id)

    def create_if_missing(
        self, path: TablePath, schema: pa.Schema, partition_by: Sequence[str] | None = None
    ) -> bool:
        """Create an empty table with ``schema`` (all columns nullable) unless one exists."""
        with self._open(path) as table:
            if table is not None:
                return False
            if _local_folder(path):
                Path(path).parent.mkdir(parents=True, exist_ok=True)
            DeltaTable.create(
                str(path),
                schema=as_nullable(schema),
                partition_by=list(partition_by or []) or None,
                mode="ignore",  # a concurrent creator wins; the table exists either way
                storage_options=self._storage,
                configuration=_TABLE_PROPERTIES,
            )
        logger.debug("created table %s", path)
        return True

    def append(
        self,
        path: TablePath,
        data: TableData,
        app_id: str,
        batch_id: int,
        partition_by: Sequence[str] | None = None,
        user_metadata: str | None = None,
    ) -> bool:
        """Append ``data`` unless batch ``batch_id`` of ``app_id`` is already in the table.

        An empty batch writes nothing (no empty commit) but creates the table if
        it is missing, so downstream readers find it.

        Returns:
            True if a commit was made, False if the batch was skipped or empty.
        """
        with self._open(path) as table:
            if self._already_written(path, table, app_id, batch_id):
                return False
            # Convert only after the check: a replayed Spark batch is never computed.
            with timed("collect"):
                arrow = to_arrow(data)
            if arrow.num_rows == 0:
                if table is None:
                    self.create_if_missing(path, arrow.schema, partition_by)
                return False
            partitions = _plain_partitions(table, arrow)
            try:
                with timed("delta_write"), self._recording(path, table, app_id, batch_id,
                                                           user_metadata) as commit:  # fmt: skip
                    if table is not None and partitions:
                        self._write_partitions(table, str(path), arrow, partitions, commit)
                        return True
                    write_deltalake(
                        table if table is not None else str(path),
                        arrow,
                        mode="append",
                        partition_by=list(partition_by) if partition_by and table is None else None,
                        storage_options=self._storage if table is None else None,
                        configuration=_TABLE_PROPERTIES if table is None else None,
                        commit_properties=commit,
                        post_commithook_properties=_hooks(table),
                    )
            except Exception as exc:  # delta-rs raises many unrelated types
                raise TableError(
                    f"append of batch {batch_id} ({app_id}) to {path} failed: {exc}"
                ) from exc
            logger.debug(
                "appended %d rows to %s (batch %d of %s)", arrow.num_rows, path, batch_id, app_id
            )
            return True

    def add_files(self, path: TablePath, files: Sequence[DataFile], app_id: str, batch_id: int,
                  user_metadata: str | None = None) -> bool:  # fmt: skip
        """Commit Parquet files that writers placed in the table's folder, as one append.

        The files must match the table's schema. They become visible only with
        this commit, so files of a batch that was never committed (a task retried,
        a crash before the commit) are never read.

        Returns:
            True if a commit was made, False if the batch was skipped or had no files.
        """
        with self._open(path) as table:
            if table is None:
                raise TableError(f"no Delta table at {path} to add files to")
            if self._already_written(path, table, app_id, batch_id) or not files:
                return False
            now_ms = int(time.time() * 1000)
            actions = [add_action(f.name, f.size, f.rows, now_ms) for f in files]
            try:
                with timed("delta_write"), self._recording(path, table, app_id, batch_id,
                                                           user_metadata) as commit:  # fmt: skip
                    table.create_write_transaction(actions, mode="append", schema=table.schema(),
                                                   commit_properties=commit,
                                                   post_commithook_properties=_hooks(table))  # fmt: skip
            except Exception as exc:  # delta-rs raises many unrelated types
                raise TableError(
                    f"commit of batch {batch_id} ({app_id}) to {path} failed: {exc}"
                ) from exc
            logger.debug(
                "added %d files to %s (batch %d of %s)", len(files), path, batch_id, app_id
            )
            return True

    def merge(
        self,
        path: TablePath,
        data: TableData,
        keys: Sequence[str],
        app_id: str,
        batch_id: int,
        partition_by: Sequence[str] | None = None,
    ) -> bool:
        """Upsert ``data`` by ``keys`` (update all columns on match, else insert).

        ``data`` must hold at most one row per key, and keys must not be null
        (null never matches; such rows are inserted again each time).

        Returns:
            True if a commit was made, False if the batch was skipped or empty.
        """
        if not keys:
            raise ValueError("merge needs at least one key column")
        with self._open(path) as table:
            if self._already_written(path, table, app_id, batch_id):
                return False
            if table is None:  # nothing to match against: the first batch is an append
                return self.append(path, data, app_id, batch_id, partition_by)
            arrow = to_arrow(data)
            if arrow.num_rows == 0:
                return False
            predicate = " AND ".join(f"t.{_quote(k)} = s.{_quote(k)}" for k in keys)
            try:
                with timed("delta_merge"), self._recording(path, table, app_id, batch_id) as commit:
                    merger = table.merge(arrow, predicate, source_alias="s", target_alias="t",
                                         commit_properties=commit,
                                         post_commithook_properties=_hooks(table))  # fmt: skip
                    metrics = (merger.when_matched_update_all().when_not_matched_insert_all()
                               .execute())  # fmt: skip
            except Exception as exc:  # delta-rs raises many unrelated types
                raise TableError(
                    f"merge of batch {batch_id} ({app_id}) into {path} failed: {exc}"
                ) from exc
            logger.debug("merged batch %d of %s into %s: %s", batch_id, app_id, path, metrics)
            return True

    def replace(
        self,
        path: TablePath,
        data: TableData,
        where: Mapping[str, Sequence[Any]],
        app_id: str,
        batch_id: int,
        partition_by: Sequence[str] | None = None,
    ) -> bool:
        """Replace the rows matching ``where`` with ``data`` (see ``TableBackend.replace``).

        Returns:
            True if a commit was made, False if the batch was skipped or empty.
        """
        predicate = where_predicate(where, _quote)
        with self._open(path) as table:
            if self._already_written(path, table, app_id, batch_id):
                return False
            if table is None:  # nothing to replace: the first batch creates the table
                return self.append(path, data, app_id, batch_id, partition_by)
            arrow = to_arrow(data)
            if arrow.num_rows == 0:
                return False
            partitions = _plain_partitions(table, arrow)
            try:
                with timed("delta_write"), self._recording(path, table, app_id, batch_id) as commit:
                    if partitions and set(where) <= set(partitions):
                        self._write_partitions(table, str(path), arrow, partitions, commit, where)
                    else:
                        write_deltalake(table, arrow, mode="overwrite", predicate=predicate,
                                        commit_properties=commit,
                                        post_commithook_properties=_hooks(table))  # fmt: skip
            except Exception as exc:  # delta-rs raises many unrelated types
                raise TableError(
                    f"replacement of batch {batch_id} ({app_id}) in {path} failed: {exc}"
                ) from exc
            logger.debug("replaced %s in %s (batch %d of %s)", predicate, path, batch_id, app_id)
            return True

    def _write_partitions(self, table: DeltaTable, path: str, data: pa.Table,
                          partitions: list[str], commit: CommitProperties,
                          where: Mapping[str, Sequence[Any]] | None = None) -> None:  # fmt: skip
        """Commit ``data`` as new files, one per partition; with ``where``, replacing its partitions."""
        delta_schema = table.schema()
        schema = as_nullable(pa.schema(delta_schema.to_arrow()))
        if sorted(data.column_names) != sorted(schema.names):  # as delta-rs' own writer refuses
            raise TableError(f"columns {data.column_names} are not the table's {schema.names}")
        files = pa.schema([field for field in schema if field.name not in partitions])
        storage = Storage(path, dict(self._storage or {}))
        actions = write_partition_files(storage, path, data, partitions, files)
        replaced = None if where is None else [
            (column, "in", [partition_string(v) for v in values]) for column, values in where.items()
        ]  # fmt: skip
        table.create_write_transaction(actions, mode="append" if where is None else "overwrite",
                                       schema=delta_schema, partition_by=partitions,
                                       partition_filters=replaced, commit_properties=commit,
                                       post_commithook_properties=_hooks(table))  # fmt: skip

    def delete(self, path: TablePath, where: Mapping[str, Sequence[Any]]) -> None:
        """Delete the rows matching ``where`` (see ``TableBackend.delete``)."""
        with self._open(path) as table:
            if table is None or not set(where) <= {field.name for field in table.schema().fields}:
                return
            try:
                with timed("delta_write"):
                    table.delete(where_predicate(where, _quote),
                                 post_commithook_properties=_hooks(table))  # fmt: skip
            except Exception as exc:  # delta-rs raises many unrelated types
                raise TableError(f"deleting {where} from {path} failed: {exc}") from exc

    def read(self, path: TablePath) -> pa.Table:
        """The whole table as Arrow (driver memory: small tables and tests)."""
        with self._open(path) as table:
            if table is None:
                raise TableError(f"no Delta table at {path}")
            return table.to_pyarrow_table()
