"""``format("dkg_bronze_blocks")``: bronze's new rows, packed per splitter as they are read.

The ``dkg_delta`` stream source (same offsets, commits and options: ``path``,
``maxBytesPerTrigger``, ...), except that each read task packs the rows it reads
into :mod:`silver.blocks` blocks instead of handing them to Spark one by one.
Extra options: ``runId`` (only this run's rows), ``splitters``, ``groupKeys``
(comma-separated grouping key of each splitter).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import ClassVar

import pyarrow as pa
from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition
from pyspark.sql.pandas.types import from_arrow_schema
from pyspark.sql.types import StructType

from bronze.schemas import RAW_EVENTS_ARROW
from core.storage import LOCAL_FILES, Storage
from core.tables.stream_source import (
    DeltaFilesPartition,
    DeltaStreamReader,
    parse_options,
    read_files,
)
from silver.blocks import BRONZE_BLOCKS_DDL, bronze_blocks
from silver.schemas import BRONZE_INPUT

__all__ = ["BLOCKS_FORMAT", "BronzeBlocksSource"]

BLOCKS_FORMAT = "dkg_bronze_blocks"


class _BlocksReader(DeltaStreamReader):
    def __init__(self, options: Mapping[str, str], bronze_columns: Sequence[str],
                 storage: Storage) -> None:  # fmt: skip
        # The columns' types are bronze's contract: no table I/O in every read task.
        arrow = pa.schema([RAW_EVENTS_ARROW.field(name) for name in bronze_columns])
        super().__init__(parse_options(options, None), from_arrow_schema(arrow), storage)
        self._run_id = options.get("runId")
        self._splitters = int(options["splitters"])
        self._group_keys = [int(k) for k in options["groupKeys"].split(",")]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:  # type: ignore[override]
        """The partition's files, packed per splitter (runs on executors)."""
        assert isinstance(partition, DeltaFilesPartition)  # noqa: S101 - Spark contract
        for rows in read_files(partition.files, self._schema, self._storage):
            blocks = bronze_blocks(rows, self._splitters, self._group_keys, self._run_id)
            if blocks.num_rows:
                yield blocks


class BronzeBlocksSource(DataSource):
    """Streams ``bronze.raw_events`` as ``BRONZE_BLOCKS_DDL`` rows (bound to a storage)."""

    storage: ClassVar[Storage] = LOCAL_FILES

    @classmethod
    def name(cls) -> str:
        """The format name."""
        return BLOCKS_FORMAT

    def schema(self) -> str:
        """One row per block."""
        return BRONZE_BLOCKS_DDL

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        """The micro-batch reader."""
        return _BlocksReader(self.options, BRONZE_INPUT, self.storage)  # options: case-insensitive
