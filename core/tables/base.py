"""The table-backend interface shared by the delta-rs and delta-spark implementations.

Every write names an *application transaction*: an ``app_id`` (one per streaming
query and target table) and a monotonically increasing ``batch_id`` (Spark's
micro-batch id). Delta records the pair in the commit, and a backend skips a write
whose ``batch_id`` is not newer than the last one recorded for that ``app_id``.
That turns ``foreachBatch``'s at-least-once delivery into exactly-once table
contents when a query restarts and replays its last micro-batch.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias, runtime_checkable

import pyarrow as pa

from core.errors import DkgError

if TYPE_CHECKING:
    import pandas as pd
    from pyspark.sql import DataFrame

__all__ = [
    "DataFile",
    "TableBackend",
    "TableData",
    "TableError",
    "TablePath",
    "as_nullable",
    "to_arrow",
    "where_predicate",
]

TablePath: TypeAlias = "str | Path"
TableData: TypeAlias = "pa.Table | pa.RecordBatch | pd.DataFrame | DataFrame"
"""What a backend accepts: Arrow, pandas, or a Spark DataFrame (a micro-batch)."""


class TableError(DkgError, RuntimeError):
    """A Delta table cannot be read or written as asked."""


@dataclass(frozen=True)
class DataFile:
    """A Parquet file already written into a table's folder, not yet in its log.

    Attributes:
        name: Path relative to the table folder.
        size: Bytes.
        rows: Rows in the file (recorded as the ``numRecords`` statistic).
    """

    name: str
    size: int
    rows: int


@runtime_checkable
class TableBackend(Protocol):
    """Delta table I/O with idempotent, transaction-tagged writes.

    Implementations: :class:`~core.tables.delta_rs.DeltaRsBackend`
    (embedded, no JVM jars) and
    :class:`~core.tables.delta_spark.DeltaSparkBackend` (native Spark).
    Both write the same Delta protocol, so either reads what the other wrote.

    Attributes:
        commits_task_files: whether a streaming query's Spark tasks write the
            tables' Parquet files themselves and the driver commits their names
            (:meth:`add_files`; delta-rs), rather than handing rows to
            :meth:`append` (delta-spark writes natively). The run's topology
            follows from it: with it, silver's read tasks land bronze too.
    """

    commits_task_files: bool

    def create_if_missing(
        self, path: TablePath, schema: pa.Schema, partition_by: Sequence[str] | None = None
    ) -> bool:
        """Create an empty table unless one exists; True if this call created it."""
        ...

    def append(
        self,
        path: TablePath,
        data: TableData,
        app_id: str,
        batch_id: int,
        partition_by: Sequence[str] | None = None,
        user_metadata: str | None = None,
    ) -> bool:
        """Append rows once per ``(app_id, batch_id)``; False if the batch was already written.

        ``user_metadata``: kept as the commit's ``commitInfo.userMetadata``.
        """
        ...

    def merge(
        self,
        path: TablePath,
        data: TableData,
        keys: Sequence[str],
        app_id: str,
        batch_id: int,
        partition_by: Sequence[str] | None = None,
    ) -> bool:
        """Upsert rows by ``keys`` once per ``(app_id, batch_id)``; False if skipped."""
        ...

    def replace(
        self,
        path: TablePath,
        data: TableData,
        where: Mapping[str, Sequence[Any]],
        app_id: str,
        batch_id: int,
        partition_by: Sequence[str] | None = None,
    ) -> bool:
        """Replace the rows matching ``where`` with ``data`` once per ``(app_id, batch_id)``.

        ``where`` maps columns to their values (each column IN its values, all
        columns at once); every row of ``data`` must match it. Partitioned by
        ``where``'s columns, the replaced rows are whole files, and no other file
        is read: cheaper than a MERGE, which joins against the whole table.
        """
        ...

    def delete(self, path: TablePath, where: Mapping[str, Sequence[Any]]) -> None:
        """Delete the rows matching ``where`` (:func:`where_predicate`); no table, or a table
        without one of ``where``'s columns, has none to delete."""
        ...

    def read(self, path: TablePath) -> pa.Table:
        """The table's current contents."""
        ...

    def version(self, path: TablePath) -> int | None:
        """The latest table version, or None if there is no table at ``path``."""
        ...

    def transaction_version(self, path: TablePath, app_id: str) -> int | None:
        """The last ``batch_id`` recorded for ``app_id``, or None."""
        ...

    def add_files(self, path: TablePath, files: Sequence[DataFile], app_id: str, batch_id: int,
                  user_metadata: str | None = None) -> bool:  # fmt: skip
        """Commit Parquet files already in the table's folder as one append, once per batch."""
        ...


def as_nullable(schema: pa.Schema) -> pa.Schema:
    """The schema with every top-level field nullable.

    Spark's file sinks store every column as nullable; doing the same keeps a
    table created from one micro-batch (whose columns Spark may mark non-null)
    from rejecting a later batch that carries a null.
    """
    return pa.schema([field.with_nullable(True) for field in schema], metadata=schema.metadata)


def _literal(value: Any) -> str:
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"no SQL literal for {value!r}: use strings and numbers")
    return repr(value)


def where_predicate(where: Mapping[str, Sequence[Any]], quote: Callable[[str], str]) -> str:
    """``where`` (column -> values) as one SQL predicate: ``c1 IN (...) AND c2 IN (...)``.

    Args:
        where: columns and the values each may take; none may be empty.
        quote: quotes a column name for the engine's SQL dialect.
    """
    if not where or not all(where.values()):
        raise ValueError("a replacement needs at least one column with values")
    return " AND ".join(f"{quote(column)} IN ({', '.join(_literal(v) for v in values)})"
                        for column, values in where.items())  # fmt: skip


def _is_spark_frame(data: Any) -> bool:
    # Duck-typed so this module never imports pyspark (delta-rs users need no JVM).
    return hasattr(data, "toArrow") and hasattr(data, "sparkSession")


def to_arrow(data: TableData) -> pa.Table:
    """Convert any accepted input to a ``pyarrow.Table`` with nullable columns.

    Raises:
        TypeError: ``data`` is none of the accepted types.
    """
    if isinstance(data, pa.Table):
        table = data
    elif isinstance(data, pa.RecordBatch):
        table = pa.Table.from_batches([data])
    elif _is_spark_frame(data):
        # Arrow collection runs on the driver; fine for micro-batches, which is
        # what foreachBatch hands over.
        table = data.toArrow()
    elif hasattr(data, "to_records") and hasattr(data, "columns"):
        table = pa.Table.from_pandas(data, preserve_index=False)
    else:
        raise TypeError(f"cannot write {type(data).__name__}: expected Arrow, pandas or Spark data")
    return table.cast(as_nullable(table.schema))
