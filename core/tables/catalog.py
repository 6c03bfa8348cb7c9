"""Spark-side access to Delta tables: DataFrames, streams and SQL names.

How ``spark.sql("SELECT * FROM gold.key_counts")`` works without Delta jars:
each layer becomes a database (``CREATE DATABASE gold``) and each table an
external catalog table ``CREATE TABLE gold.key_counts USING <source> LOCATION
'<path>'`` backed by the Python data source. Spark 4.2 does not hand a catalog
table's ``OPTIONS`` to a Python data source, and its ``LOCATION`` only as a
``path`` on Spark's own filesystems (no S3 here), so every table gets its own
tiny subclass of :class:`DeltaSource` with the table fixed, registered under its
own format name (:func:`~core.tables.stream_source.delta_format`).
Temporary views were not an option: their names cannot have a namespace. The
catalog is Spark's in-memory one, so call :func:`register_tables` once per
session (it is cheap: no data is read). Database folders go under the
warehouse's state folder (``_catalog``) so nothing lands in the working
directory, and dropping a database there never touches table data (the tables
are external).

With delta-spark loaded, tables are plain ``USING delta`` tables instead.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

from core.spark.session import delta_spark_available
from core.storage import LOCAL_FILES, Storage
from core.tables.base import TableBackend, TablePath
from core.tables.delta_rs import DeltaRsBackend
from core.tables.delta_spark import DeltaSparkBackend
from core.tables.stream_source import delta_format

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from core.warehouse import Warehouse

__all__ = [
    "default_backend",
    "read_delta",
    "read_delta_stream",
    "register_tables",
]

logger = logging.getLogger(__name__)


def default_backend(spark: SparkSession | None = None, storage: Storage | None = None
                    ) -> TableBackend:  # fmt: skip
    """delta-spark when the session can load it, else delta-rs (on ``storage``)."""
    if spark is not None and delta_spark_available(spark):
        return DeltaSparkBackend(spark)
    return DeltaRsBackend(storage.delta_options() if storage is not None else None)


def read_delta(spark: SparkSession, path: TablePath, version: int | None = None,
               storage: Storage | None = None, columns: Sequence[str] | None = None
               ) -> DataFrame:  # fmt: skip
    """A Delta table (or one of its versions) as a batch DataFrame.

    Without delta-spark this is the Python data source's batch reader: files are
    read in parallel by executors as Arrow batches, lazily, so tables of millions
    of rows never pass through the driver (unlike
    ``spark.createDataFrame(arrow_table)``). ``columns`` reads only those (default:
    all); a Python source cannot prune columns from a later ``select``.
    """
    reader = spark.read
    if version is not None:
        reader = reader.option("versionAsOf", version)
    if delta_spark_available(spark):
        table = reader.format("delta").load(str(path))
        return table.select(*columns) if columns else table
    if columns:
        reader = reader.option("columns", ",".join(columns))
    return reader.format(delta_format(spark, storage or LOCAL_FILES)).option("path", str(path)).load()


def read_delta_stream(
    spark: SparkSession,
    path: TablePath,
    starting_version: int | str = 0,
    max_files_per_trigger: int | None = None,
    skip_change_commits: bool = False,
    columns: Sequence[str] | None = None,
    max_bytes_per_trigger: int | None = None,
    storage: Storage | None = None,
) -> DataFrame:
    """A Delta table as an append-only stream (native delta-spark when available).

    Args:
        spark: The session.
        path: The table's URI or folder; the table must exist (its schema is the stream's).
        starting_version: First version to read (``0`` = everything, ``"latest"``).
        max_files_per_trigger: Cap per micro-batch (whole commits for dkg_delta).
        max_bytes_per_trigger: Cap on data file bytes per micro-batch (whole
            commits for dkg_delta; a soft cap for delta-spark, as its own option).
        skip_change_commits: Ignore commits that remove rows instead of failing.
        columns: Read only these columns (default: all).
        storage: Where the table is (default: a local folder).
    """
    reader = spark.readStream.option("startingVersion", str(starting_version))
    if max_files_per_trigger:
        reader = reader.option("maxFilesPerTrigger", str(max_files_per_trigger))
    if max_bytes_per_trigger:
        reader = reader.option("maxBytesPerTrigger", str(max_bytes_per_trigger))
    if skip_change_commits:
        reader = reader.option("skipChangeCommits", "true")
    if delta_spark_available(spark):
        stream = reader.format("delta").load(str(path))
        return stream.select(*columns) if columns else stream
    if columns:
        reader = reader.option("columns", ",".join(columns))
    return reader.format(delta_format(spark, storage or LOCAL_FILES)).option("path", str(path)).load()


def _sql_string(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def register_tables(spark: SparkSession, warehouse: Warehouse) -> list[str]:
    """Make every existing table of ``warehouse`` queryable as ``<layer>.<table>``.

    Re-running refreshes the definitions (new tables, changed schemas).

    Returns:
        The registered names, e.g. ``["bronze.raw_events", "gold.key_counts"]``.
    """
    native = delta_spark_available(spark)
    names: list[str] = []
    for layer, table, uri in warehouse.tables():
        catalog_dir = warehouse.catalog_path(layer)
        spark.sql(f"CREATE DATABASE IF NOT EXISTS `{layer}` LOCATION {_sql_string(str(catalog_dir))}")
        qualified = f"`{layer}`.`{table}`"
        # Spark qualifies a LOCATION with its own filesystems, which have no S3
        # here; the bound source knows the table, so an object store's table
        # gets a placeholder folder in the catalog's scratch space.
        location = _sql_string(uri if warehouse.storage.local else str(catalog_dir / table))
        if native:
            spark.sql(f"CREATE TABLE IF NOT EXISTS {qualified} USING delta LOCATION {location}")
        else:
            source = delta_format(spark, warehouse.storage, uri)
            # Drop first: the catalog keeps the schema from creation time.
            spark.sql(f"DROP TABLE IF EXISTS {qualified}")
            spark.sql(f"CREATE TABLE {qualified} USING {source} LOCATION {location}")
        names.append(f"{layer}.{table}")
    logger.debug("registered %d tables from %s", len(names), warehouse.root)
    return names
