"""``format("dkg_routed_blocks")``: new ``silver.routed`` tuples, packed per worker as they are read.

The ``dkg_delta`` stream source over ``silver.routed`` (same offsets, commits and
options), except that each read task packs the run's tuples per worker into
:mod:`silver.blocks` blocks, each tuple tagged with the silver commit it came
in (the workers serve commits in order). Spark then groups the blocks by
worker into :func:`silver.workers.serve_worker_blocks`. Extra options: ``runId``,
``workers`` and ``groupKeys`` (comma-separated grouping key of each worker).
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
from silver.blocks import group_blocks
from silver.sink import ROUTED_TABLE_ARROW
from silver.workers import WORKER_INPUT_ARROW

__all__ = ["ROUTED_BLOCKS_FORMAT", "WORKER_BLOCKS_DDL", "WORKER_READ", "RoutedBlocksSource",
           "pack_worker_rows", "read_worker_blocks", "worker_blocks"]  # fmt: skip

ROUTED_BLOCKS_FORMAT = "dkg_routed_blocks"
WORKER_BLOCKS_DDL = "worker_group INT, worker INT, rows LONG, block BINARY"
_WORKER_BLOCKS_ARROW = pa.schema([("worker_group", pa.int32()), ("worker", pa.int32()),
                                  ("rows", pa.int64()), ("block", pa.binary())])  # fmt: skip
# What the read tasks take of silver.routed.
WORKER_READ = pa.schema([ROUTED_TABLE_ARROW.field("run_id"),
                   *(ROUTED_TABLE_ARROW.field(n) for n in WORKER_INPUT_ARROW.names if n != "version")])  # fmt: skip


def worker_blocks(rows: pa.Table, version: int, group_keys: list[int]) -> pa.RecordBatch:
    """Routed tuples of one commit -> one block row per worker present (``WORKER_BLOCKS_DDL``)."""
    tagged = rows.append_column("version", pa.repeat(pa.scalar(version, pa.int64()), rows.num_rows))
    tagged = tagged.select(WORKER_INPUT_ARROW.names).cast(WORKER_INPUT_ARROW)
    return group_blocks(tagged, tagged["worker"].to_numpy(), group_keys, _WORKER_BLOCKS_ARROW)


class _BlocksReader(DeltaStreamReader):
    def __init__(self, options: Mapping[str, str], storage: Storage) -> None:
        # The columns' types are silver.routed's contract: no table I/O in every read task.
        super().__init__(parse_options(options, None), from_arrow_schema(WORKER_READ), storage)
        self._run_id = options["runId"]
        self._group_keys = [int(k) for k in options["groupKeys"].split(",")]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:  # type: ignore[override]
        """The partition's files, packed per worker (runs on executors)."""
        assert isinstance(partition, DeltaFilesPartition)  # noqa: S101 - Spark contract
        for file in partition.files:
            batches = list(read_files([file], self._schema, self._storage))
            if not batches:
                continue
            rows = pa.Table.from_batches(batches)
            rows = rows.filter(pc.equal(rows["run_id"], self._run_id))
            if rows.num_rows:
                yield worker_blocks(rows, file.version, self._group_keys)


class RoutedBlocksSource(DataSource):
    """Streams ``silver.routed`` as ``WORKER_BLOCKS_DDL`` rows (bound to a storage)."""

    storage: ClassVar[Storage] = LOCAL_FILES

    @classmethod
    def name(cls) -> str:
        """The format name."""
        return ROUTED_BLOCKS_FORMAT

    def schema(self) -> str:
        """One row per block."""
        return WORKER_BLOCKS_DDL

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        """The micro-batch reader."""
        return _BlocksReader(self.options, self.storage)  # options: case-insensitive


def read_worker_blocks(spark: SparkSession, storage: Storage, routed: str, run_id: str,
                       group_keys: list[int], max_files_per_trigger: int | None = None,
                       ) -> DataFrame:  # fmt: skip
    """The run's new routed tuples as a stream of per-worker blocks."""
    source = bind_source(spark, RoutedBlocksSource, storage=storage)
    reader = spark.readStream.format(source).option("path", routed).option("runId", run_id)
    reader = reader.option("groupKeys", ",".join(map(str, group_keys)))
    if max_files_per_trigger:
        reader = reader.option("maxFilesPerTrigger", str(max_files_per_trigger))
    return observe_input_rows(reader.load(), "rows")  # Spark counts blocks; progress, tuples


def pack_worker_rows(batches: Iterator[pa.RecordBatch],
                     group_keys: list[int]) -> Iterator[pa.RecordBatch]:  # fmt: skip
    """``mapInArrow`` over routed rows of one run read natively (delta-spark), packed per worker.

    A native stream does not say which commit a row came in: a micro-batch counts
    as one commit, so its tuples are served in event-time order.
    """
    for batch in batches:
        if batch.num_rows:
            yield worker_blocks(pa.Table.from_batches([batch]), 0, group_keys)
