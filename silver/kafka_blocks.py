"""``format("dkg_kafka_blocks")``: Kafka ranges landed in bronze and read on into silver, packed.

With the delta-rs backend, silver reads the topic itself. It plans the same
offset ranges as ``dkg_kafka`` (same offsets, same checkpoint); each task lands
each of its ranges as a bronze Parquet file (:mod:`bronze.landing`) and hands Spark
the rows it just read, packed for the splitter that owns the partition, together
with a ``files`` block naming the landed file. The routing step passes that block on
and the silver query's writer commits the file to ``bronze.raw_events`` in the
same micro-batch as silver's tables. A message reaches silver without waiting
for a bronze commit and a second query's trigger.

Options: those of ``dkg_kafka``, plus ``path`` (the bronze table's URI),
``run_id`` (the value of bronze's ``run_id`` column), ``splitters`` and
``groupKeys`` (comma-separated grouping key of each splitter).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import ClassVar

import pyarrow as pa
from pyspark.sql.datasource import DataSourceStreamReader
from pyspark.sql.types import StructType

from bronze.landing import LANDING_TARGET, bronze_batches, write_landed
from bronze.schemas import RAW_EVENTS_ARROW
from core.kafka.admin import BrokerError
from core.kafka.client import KafkaClient
from core.kafka.source import KafkaRange, KafkaSource, KafkaStreamReader
from core.storage import LOCAL_FILES, Storage
from core.tables.task_files import TASK_FILES_ARROW
from silver.blocks import BRONZE_BLOCKS_DDL, bronze_blocks, files_block
from silver.schemas import BRONZE_INPUT

__all__ = ["KAFKA_BLOCKS_FORMAT", "KafkaBlocksSource"]

KAFKA_BLOCKS_FORMAT = "dkg_kafka_blocks"


class _KafkaBlocksReader(KafkaStreamReader):
    def __init__(self, options: dict[str, str], client: KafkaClient, storage: Storage) -> None:
        super().__init__(options, client)
        self.storage = storage
        lowered = {k.lower(): v for k, v in options.items()}  # Spark lower-cases them
        try:
            self.table, self.run_id = lowered["path"], lowered["run_id"]
            self._splitters = int(lowered["splitters"])
            self._group_keys = [int(k) for k in lowered["groupkeys"].split(",")]
        except KeyError as exc:
            raise BrokerError(
                f"the {KAFKA_BLOCKS_FORMAT} source needs the option {exc.args[0]!r}"
            ) from None

    def _read_range(self, kafka_range: KafkaRange) -> Iterator[pa.RecordBatch]:
        """Land the range, then yield its rows and its file, packed (runs on executors)."""
        rows = pa.Table.from_batches(bronze_batches(kafka_range, self.client, self.run_id),
                                     schema=RAW_EVENTS_ARROW)  # fmt: skip
        landed = write_landed(kafka_range, rows, self.storage, self.table, self.run_id)
        if landed is None:
            return
        yield bronze_blocks(rows.select(list(BRONZE_INPUT)), self._splitters, self._group_keys)
        file = pa.RecordBatch.from_pylist([{"target": LANDING_TARGET, "name": landed.name,
                                            "size": landed.size, "rows": landed.rows}],
                                          schema=TASK_FILES_ARROW)  # fmt: skip
        splitter = kafka_range.partition % self._splitters
        yield files_block(file, splitter, self._group_keys[splitter])


class KafkaBlocksSource(KafkaSource):
    """Streams a Kafka topic as ``BRONZE_BLOCKS_DDL`` rows, landing it in bronze on the way.

    Bound to a Kafka client and the bronze table's storage
    (:func:`core.spark.sources.bind_source`).
    """

    storage: ClassVar[Storage] = LOCAL_FILES

    @classmethod
    def name(cls) -> str:
        """The format name."""
        return KAFKA_BLOCKS_FORMAT

    def schema(self) -> str:
        """One row per block."""
        return BRONZE_BLOCKS_DDL

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        """The micro-batch reader."""
        return _KafkaBlocksReader(dict(self.options), self.bound_client(), self.storage)
