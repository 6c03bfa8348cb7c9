"""The native Delta backend: delta-spark's ``format("delta")``, when its jars are loaded.

Kept thin on purpose. Appends and replacements (``replaceWhere``) use
delta-spark's idempotent-write options ``txnAppId``/``txnVersion``; MERGE uses the session settings
``spark.databricks.delta.write.txnAppId``/``txnVersion`` (delta-spark >= 2.4) and
the ``delta.tables`` Python API. Metadata reads (version, last transaction,
create) go through delta-rs: it is always installed and reads the same protocol.
Use only when :func:`core.spark.session.delta_spark_available` is true.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from core.tables.base import DataFile, TableData, TableError, TablePath, where_predicate
from core.tables.delta_rs import DeltaRsBackend

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = ["DeltaSparkBackend"]

logger = logging.getLogger(__name__)

_TXN_APP = "spark.databricks.delta.write.txnAppId"
_TXN_VERSION = "spark.databricks.delta.write.txnVersion"


class DeltaSparkBackend:
    """Delta table I/O through Spark's native Delta source; implements ``TableBackend``.

    Args:
        spark: A session where ``delta_spark_available(spark)`` is true.
    """

    commits_task_files = False  # queries hand their rows to Spark's native Delta writer

    def __init__(self, spark: SparkSession) -> None:
        """Bind the backend to a session."""
        self._spark = spark
        self._meta = DeltaRsBackend()

    def _frame(self, data: TableData) -> DataFrame:
        if hasattr(data, "sparkSession"):
            return data  # type: ignore[return-value]
        if isinstance(data, pa.RecordBatch):
            data = pa.Table.from_batches([data])
        return self._spark.createDataFrame(data)  # type: ignore[arg-type]

    def _skip(self, path: TablePath, app_id: str, batch_id: int) -> bool:
        last = self._meta.transaction_version(path, app_id)
        if last is not None and last >= batch_id:
            logger.info("skip batch %d of %s: already written (last %d)", batch_id, app_id, last)
            return True
        return False

    def version(self, path: TablePath) -> int | None:
        """The latest version, or None if there is no table."""
        return self._meta.version(path)

    def transaction_version(self, path: TablePath, app_id: str) -> int | None:
        """The last batch id recorded for ``app_id``, or None."""
        return self._meta.transaction_version(path, app_id)

    def add_files(self, path: TablePath, files: Sequence[DataFile], app_id: str, batch_id: int,
                  user_metadata: str | None = None) -> bool:  # fmt: skip
        """Commit files already in the table's folder: a log entry, the same in either backend."""
        return self._meta.add_files(path, files, app_id, batch_id, user_metadata)

    def create_if_missing(
        self, path: TablePath, schema: pa.Schema, partition_by: Sequence[str] | None = None
    ) -> bool:
        """Create an empty table unless one exists (via delta-rs; same protocol)."""
        return self._meta.create_if_missing(path, schema, partition_by)

    def append(
        self,
        path: TablePath,
        data: TableData,
        app_id: str,
        batch_id: int,
        partition_by: Sequence[str] | None = None,
        user_metadata: str | None = None,
    ) -> bool:
        """Append once per ``(app_id, batch_id)``; delta-spark also enforces it itself."""
        if self._skip(path, app_id, batch_id):
            return False
        writer = (
            self._frame(data)
            .write.format("delta")
            .mode("append")
            .option("txnAppId", app_id)
            .option("txnVersion", batch_id)
        )
        if user_metadata is not None:
            writer = writer.option("userMetadata", user_metadata)
        if partition_by:
            writer = writer.partitionBy(*partition_by)
        writer.save(str(path))
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
        """Upsert by ``keys`` once per ``(app_id, batch_id)``."""
        if not keys:
            raise ValueError("merge needs at least one key column")
        if self._skip(path, app_id, batch_id):
            return False
        if self.version(path) is None:
            return self.append(path, data, app_id, batch_id, partition_by)
        try:
            from delta.tables import DeltaTable
        except ImportError as exc:
            raise TableError("the delta-spark Python package is needed for MERGE") from exc
        condition = " AND ".join(f"t.`{k}` = s.`{k}`" for k in keys)
        frame = self._frame(data)
        updates = {f"`{c}`": f"s.`{c}`" for c in frame.columns if c not in keys}
        self._spark.conf.set(_TXN_APP, app_id)
        self._spark.conf.set(_TXN_VERSION, str(batch_id))
        try:
            (
                DeltaTable.forPath(self._spark, str(path))
                .alias("t")
                .merge(frame.alias("s"), condition)
                .whenMatchedUpdate(set=updates)
                .whenNotMatchedInsertAll()
                .execute()
            )
        finally:
            # The settings apply to every later write of the session otherwise.
            self._spark.conf.unset(_TXN_APP)
            self._spark.conf.unset(_TXN_VERSION)
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
        """Replace the rows matching ``where`` once per ``(app_id, batch_id)`` (``replaceWhere``)."""
        predicate = where_predicate(where, lambda column: "`" + column.replace("`", "``") + "`")
        if self._skip(path, app_id, batch_id):
            return False
        if self.version(path) is None:
            return self.append(path, data, app_id, batch_id, partition_by)
        (self._frame(data).write.format("delta").mode("overwrite")
         .option("replaceWhere", predicate).option("txnAppId", app_id)
         .option("txnVersion", batch_id).save(str(path)))  # fmt: skip
        return True

    def delete(self, path: TablePath, where: Mapping[str, Sequence[Any]]) -> None:
        """Delete the rows matching ``where`` (see ``TableBackend.delete``): they are replaced
        with no rows (``replaceWhere``)."""
        if self.version(path) is None:
            return
        table = self._spark.read.format("delta").load(str(path))
        if set(where) <= set(table.columns):
            predicate = where_predicate(where, lambda column: "`" + column.replace("`", "``") + "`")
            (table.limit(0).write.format("delta").mode("overwrite")
             .option("replaceWhere", predicate).save(str(path)))  # fmt: skip

    def read(self, path: TablePath) -> pa.Table:
        """The whole table as Arrow, read by Spark."""
        return self._spark.read.format("delta").load(str(path)).toArrow()
