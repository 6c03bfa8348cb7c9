"""``format("dkg_window_partials")``: new ``silver.routed`` rows, pre-aggregated as they are read.

The ``dkg_delta`` stream source over ``silver.routed`` (same offsets, commits and
options), except that each read task reduces its files to per-(run, window,
worker, key) partials (:func:`silver.windows.window_partials`) before Spark
sees them: a micro-batch holds far fewer partials than tuples. Spark then
merges the partials of all tasks. Extra options: ``runId`` (only this run's
rows) and ``windowMs`` (the worker window).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import ClassVar

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition
from pyspark.sql.pandas.types import from_arrow_schema
from pyspark.sql.types import StructType

from core.spark.input_rows import observe_input_rows
from core.spark.sources import bind_source
from core.storage import LOCAL_FILES, Storage
from core.tables.stream_source import (
    DeltaFilesPartition,
    DeltaStreamReader,
    parse_options,
    read_files,
)
from silver.schemas import ROUTED_ARROW
from silver.windows import PARTIALS_DDL, WINDOW_INPUT, window_partials

__all__ = ["PARTIALS_FORMAT", "RoutedPartialsSource", "read_window_partials"]

PARTIALS_FORMAT = "dkg_window_partials"


class _PartialsReader(DeltaStreamReader):
    def __init__(self, options: Mapping[str, str], storage: Storage) -> None:
        # The columns' types are silver.routed's contract: no table I/O in every read task.
        arrow = pa.schema([ROUTED_ARROW.field(name) for name in WINDOW_INPUT])
        super().__init__(parse_options(options, None), from_arrow_schema(arrow), storage)
        self._run_id = options.get("runId")
        self._window_ms = int(options["windowMs"])

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:  # type: ignore[override]
        """The partition's files as partials (runs on executors)."""
        assert isinstance(partition, DeltaFilesPartition)  # noqa: S101 - Spark contract
        batches = list(read_files(partition.files, self._schema, self._storage))
        if not batches:
            return
        rows = pa.Table.from_batches(batches)
        if self._run_id is not None:
            rows = rows.filter(pc.equal(rows["run_id"], self._run_id))
        yield from window_partials(rows, self._window_ms).to_batches()


class RoutedPartialsSource(DataSource):
    """Streams ``silver.routed`` as ``PARTIALS_DDL`` rows (bound to a storage)."""

    storage: ClassVar[Storage] = LOCAL_FILES

    @classmethod
    def name(cls) -> str:
        """The format name."""
        return PARTIALS_FORMAT

    def schema(self) -> str:
        """One row per partial."""
        return PARTIALS_DDL

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        """The micro-batch reader."""
        return _PartialsReader(self.options, self.storage)  # options: case-insensitive


def read_window_partials(spark: SparkSession, storage: Storage, routed: str, run_id: str,
                         window_ms: int, max_files_per_trigger: int | None = None,
                         ) -> DataFrame:  # fmt: skip
    """The run's new routed tuples as a stream of worker-window partials."""
    source = bind_source(spark, RoutedPartialsSource, storage=storage)
    reader = spark.readStream.format(source).option("path", routed)
    reader = reader.option("runId", run_id).option("windowMs", str(window_ms))
    if max_files_per_trigger:
        reader = reader.option("maxFilesPerTrigger", str(max_files_per_trigger))
    return observe_input_rows(reader.load(), "tuples")  # Spark counts partials; progress, tuples
