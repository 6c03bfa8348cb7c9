"""A Spark Python data source over Delta tables written by delta-rs (no Delta jars).

``spark.read.format("dkg_delta")`` reads a snapshot; ``spark.readStream`` reads
the table as an append-only stream whose offset is ``{"version": n}``, the last
table version processed. A micro-batch ``(start, end]`` reads exactly the files
that commits ``start+1 .. end`` added (see :mod:`.delta_log`), so every appended
row arrives once, and a restarted query resumes after its checkpointed version.

``read`` yields ``pyarrow.RecordBatch`` es (supported since Spark 4.0), which Spark
takes as-is instead of converting Python tuples row by row.

The table's storage (a local folder or an object store, see
:mod:`core.storage`) rides in the source class (:func:`delta_format`); without
one, paths are local.

Options (case-insensitive):

- ``path``: the table's URI or local folder (required unless the source class fixes it).
- ``startingVersion``: first version to stream, default ``0`` (everything);
  ``latest`` streams only commits made after the query starts.
- ``maxFilesPerTrigger``: cap on files per micro-batch, rounded to whole
  commits (at least one commit per batch), because the offset is a version.
- ``maxBytesPerTrigger``: cap on the added files' bytes per micro-batch, in
  whole commits as well (used when ``maxFilesPerTrigger`` is not set).
- ``skipChangeCommits``: ``true`` skips commits that remove rows (MERGE,
  DELETE, overwrite) instead of failing the stream, as delta-spark's option.
- ``versionAsOf``: batch reads only; the snapshot version.
- ``minPartitions``: at least this many read tasks when there are enough
  files (default 2).
- ``columns``: comma-separated columns to read (default: all). Spark cannot
  prune a Python source's columns, and every column read crosses into the JVM.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar
from urllib.parse import unquote, urlparse

import pyarrow as pa
from pyspark.sql.datasource import (
    DataSource,
    DataSourceReader,
    DataSourceStreamReader,
    InputPartition,
)
from pyspark.sql.pandas.types import from_arrow_schema, to_arrow_schema
from pyspark.sql.streaming.datasource import (
    ReadAllAvailable,
    ReadLimit,
    ReadMaxBytes,
    ReadMaxFiles,
    SupportsTriggerAvailableNow,
)
from pyspark.sql.types import StructType

from core.spark.sources import bind_source
from core.storage import LOCAL_FILES, Storage
from core.tables.delta_log import (
    AddedFile,
    Commit,
    DeltaLogError,
    latest_version,
    pack_files,
    read_commit,
    snapshot_files,
)

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = [
    "SOURCE_NAME",
    "DeltaFilesPartition",
    "DeltaSource",
    "DeltaStreamError",
    "DeltaStreamReader",
    "delta_format",
    "parse_options",
    "read_files",
]

logger = logging.getLogger(__name__)

SOURCE_NAME = "dkg_delta"
_BATCH_ROWS = 128 * 1024  # rows per Arrow batch handed to Spark


class DeltaStreamError(DeltaLogError):
    """The table changed in a way an append-only stream cannot follow."""


@dataclass(frozen=True)
class _Options:
    path: str
    starting_version: int | str = 0
    max_files: int | None = None
    max_bytes: int | None = None
    skip_change_commits: bool = False
    version_as_of: int | None = None
    min_partitions: int = 2


def _table_uri(path: str) -> str:
    parsed = urlparse(path)
    if parsed.scheme == "file":
        return unquote(parsed.path)
    if len(parsed.scheme) > 1:  # an object store's URI
        return path.rstrip("/")
    return str(Path(path).absolute())


def parse_options(options: Mapping[str, str], fixed_path: str | None) -> _Options:
    # A bound table wins: Spark passes a catalog table's LOCATION as ``path``, and
    # for a table in object storage that is only a local placeholder.
    path = fixed_path or options.get("path")
    if not path:
        raise ValueError(f"{SOURCE_NAME}: option 'path' (the Delta table folder) is required")
    start = str(options.get("startingVersion", "0")).strip().lower()
    max_files = options.get("maxFilesPerTrigger")
    max_bytes = options.get("maxBytesPerTrigger")
    as_of = options.get("versionAsOf")
    return _Options(
        path=_table_uri(path),
        starting_version="latest" if start == "latest" else int(start),
        max_files=int(max_files) if max_files else None,
        max_bytes=int(max_bytes) if max_bytes else None,
        skip_change_commits=str(options.get("skipChangeCommits", "false")).lower() == "true",
        version_as_of=int(as_of) if as_of is not None else None,
        min_partitions=int(options.get("minPartitions", "2")),
    )


class DeltaFilesPartition(InputPartition):
    """The files one Spark task reads (picklable)."""

    def __init__(self, files: Sequence[AddedFile]) -> None:
        """Wrap the files of one task."""
        super().__init__(tuple(files))

    @property
    def files(self) -> tuple[AddedFile, ...]:
        """The files, in log order."""
        return self.value  # type: ignore[no-any-return]


def _constant(value: Any, arrow_type: pa.DataType, rows: int) -> pa.Array:
    if value is None:
        return pa.nulls(rows, arrow_type)
    return pa.repeat(pa.scalar(value, type=arrow_type), rows)


def _conform(
    batch: pa.RecordBatch | None, rows: int, target: pa.Schema, file: AddedFile
) -> pa.RecordBatch:
    # Spark checks the batch schema for exact equality, so every column is cast
    # to the declared type; partition columns come from the log, and columns
    # the file lacks (added by later schema evolution) become nulls.
    present = batch.schema.names if batch is not None else []
    columns: list[pa.Array] = []
    for field in target:
        if batch is not None and field.name in present:
            column = batch.column(field.name)
            columns.append(column if column.type == field.type else column.cast(field.type))
        elif field.name in file.partition_values:
            columns.append(_constant(file.partition_values[field.name], field.type, rows))
        else:
            columns.append(pa.nulls(rows, field.type))
    return pa.RecordBatch.from_arrays(columns, schema=target)


def read_files(files: Sequence[AddedFile], schema: StructType,
               storage: Storage) -> Iterator[pa.RecordBatch]:  # fmt: skip
    """The files' rows as Arrow batches in ``schema`` (columns, types, partition values)."""
    target = to_arrow_schema(schema, timezone="UTC")
    for file in files:
        parquet = storage.parquet_file(file.path)
        present = set(parquet.schema_arrow.names)
        columns = [name for name in target.names if name in present]
        if not columns:  # only partition columns requested: row count is in the footer
            yield _conform(None, parquet.metadata.num_rows, target, file)
            continue
        for batch in parquet.iter_batches(batch_size=_BATCH_ROWS, columns=columns):
            yield _conform(batch, batch.num_rows, target, file)


def _partition_types(schema: StructType) -> dict[str, pa.DataType]:
    return {f.name: f.type for f in to_arrow_schema(schema, timezone="UTC")}


class DeltaBatchReader(DataSourceReader):
    """Reads one snapshot of the table; planned on the driver, read on executors."""

    def __init__(self, options: _Options, schema: StructType, storage: Storage) -> None:
        """Keep options, schema and storage only: this object is pickled to every task."""
        self._options = options
        self._schema = schema
        self._storage = storage

    def partitions(self) -> Sequence[InputPartition]:
        """Balanced groups of the snapshot's live files."""
        files = snapshot_files(self._storage, self._options.path, self._options.version_as_of)
        groups = pack_files(files, self._options.min_partitions)
        # An empty table still needs one (empty) partition: given none, Spark calls
        # read() with a partition of its own, which has no files to read.
        return [DeltaFilesPartition(g) for g in groups or [()]]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:  # type: ignore[override]
        """Arrow batches of the partition's files, in the declared schema."""
        assert isinstance(partition, DeltaFilesPartition)  # noqa: S101 - Spark contract
        return read_files(partition.files, self._schema, self._storage)


class DeltaStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """Streams the rows appended by each new table version.

    Offsets, planning and commits run in one long-lived Python process on the
    driver (so the commit cache below lives there); ``read`` runs in executors on
    a freshly built, empty reader.
    """

    def __init__(self, options: _Options, schema: StructType, storage: Storage) -> None:
        """Keep options, schema and storage; no I/O (Spark builds readers for planning too)."""
        self._options = options
        self._schema = schema
        self._storage = storage
        self._target: int | None = None
        self._commits: dict[int, Commit] = {}

    def initialOffset(self) -> dict[str, int]:
        """Just before ``startingVersion`` (``latest``: the version at query start)."""
        start = self._options.starting_version
        if start == "latest":
            return {"version": self._latest()}
        return {"version": int(start) - 1}

    def _latest(self) -> int:
        return latest_version(self._storage, self._options.path)

    def getDefaultReadLimit(self) -> ReadLimit:
        """``maxFilesPerTrigger`` or ``maxBytesPerTrigger`` as a read limit, else everything."""
        if self._options.max_files:
            return ReadMaxFiles(self._options.max_files)
        if self._options.max_bytes:
            return ReadMaxBytes(self._options.max_bytes)
        return ReadAllAvailable()

    def prepareForTriggerAvailableNow(self) -> None:
        """Freeze the end of an ``availableNow`` run at the current version."""
        self._target = self._latest()

    def latestOffset(self, start: dict[str, int], limit: ReadLimit) -> dict[str, int]:
        """The version to read up to, honouring a file or byte limit in whole commits."""
        begin = int(start["version"])
        latest = self._target if self._target is not None else self._latest()
        if latest <= begin:
            return {"version": begin}
        if isinstance(limit, ReadMaxFiles):
            cap, weigh = limit.max_files, lambda adds: len(adds)
        elif isinstance(limit, ReadMaxBytes):
            cap, weigh = limit.max_bytes, lambda adds: sum(f.size for f in adds)
        else:
            return {"version": latest}
        end, taken = begin, 0
        for version in range(begin + 1, latest + 1):
            weight = weigh(self._commit(version).adds)
            if end > begin and taken + weight > cap:
                break
            end, taken = version, taken + weight
        return {"version": end}

    def reportLatestOffset(self) -> dict[str, int] | None:
        """The table's newest version, for the query progress."""
        return {"version": self._latest()}

    def partitions(self, start: dict[str, int], end: dict[str, int]) -> Sequence[InputPartition]:
        """Balanced groups of the files added by versions ``(start, end]``."""
        files: list[AddedFile] = []
        for version in range(int(start["version"]) + 1, int(end["version"]) + 1):
            commit = self._commit(version)
            if commit.removes_data:
                if self._options.skip_change_commits:
                    logger.info("skipping change commit %d of %s", version, self._options.path)
                    continue
                raise DeltaStreamError(
                    f"{self._options.path}: version {version} removes rows (MERGE/DELETE/"
                    "overwrite); a stream only follows appends. Set skipChangeCommits=true "
                    "to ignore such commits."
                )
            files.extend(commit.adds)
        return [DeltaFilesPartition(g) for g in pack_files(files, self._options.min_partitions)]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:  # type: ignore[override]
        """Arrow batches of the partition's files, in the declared schema."""
        assert isinstance(partition, DeltaFilesPartition)  # noqa: S101 - Spark contract
        return read_files(partition.files, self._schema, self._storage)

    def commit(self, end: dict[str, int]) -> None:
        """Forget cached commits that Spark will not ask for again."""
        done = int(end["version"])
        self._commits = {v: c for v, c in self._commits.items() if v > done}

    def _commit(self, version: int) -> Commit:
        if version not in self._commits:
            types = _partition_types(self._schema)
            self._commits[version] = read_commit(self._storage, self._options.path, version, types)
        return self._commits[version]


def _table_schema(storage: Storage, path: str, columns: Sequence[str] | None = None) -> StructType:
    """A table's current schema, or only ``columns`` of it (Delta timestamps as TIMESTAMP)."""
    from deltalake import DeltaTable
    from deltalake.exceptions import TableNotFoundError

    try:
        table = DeltaTable(path, storage_options=storage.delta_options())
        arrow = pa.schema(table.schema().to_arrow())
    except TableNotFoundError:
        raise DeltaLogError(
            f"no Delta table at {path}; create it first or pass .schema(...)"
        ) from None
    if columns:
        missing = [name for name in columns if name not in arrow.names]
        if missing:
            raise DeltaLogError(f"{path} has no column {', '.join(map(repr, missing))}")
        arrow = pa.schema([arrow.field(name) for name in columns])
    return from_arrow_schema(arrow)


class DeltaSource(DataSource):
    """``format("dkg_delta")``: batch and streaming reads of a Delta table.

    Subclasses may set ``fixed_path`` to serve one table without a ``path``
    option; that is how SQL catalog tables are bound (Spark does not pass a
    catalog table's options to Python data sources).
    """

    fixed_path: ClassVar[str | None] = None
    storage: ClassVar[Storage | None] = None

    @classmethod
    def name(cls) -> str:
        """The format name."""
        return SOURCE_NAME

    def _options(self) -> _Options:
        return parse_options(self.options, self.fixed_path)

    def _storage(self) -> Storage:
        return self.storage or LOCAL_FILES

    def schema(self) -> StructType:
        """The table's current schema (Delta timestamps map to Spark TIMESTAMP)."""
        wanted = self.options.get("columns")
        names = [name.strip() for name in wanted.split(",") if name.strip()] if wanted else None
        return _table_schema(self._storage(), self._options().path, names)

    def reader(self, schema: StructType) -> DataSourceReader:
        """A snapshot reader."""
        return DeltaBatchReader(self._options(), schema, self._storage())

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        """An append-only stream reader."""
        return DeltaStreamReader(self._options(), schema, self._storage())


def delta_format(spark: SparkSession, storage: Storage, table: str | None = None) -> str:
    """Register ``dkg_delta`` bound to ``storage`` (and to one table, if given); its name."""
    if table is None:
        return bind_source(spark, DeltaSource, storage=storage)
    return bind_source(spark, DeltaSource, storage=storage, fixed_path=table)
