"""The join's input as blocks: each Kafka range parsed, sharded and packed by the task that reads it.

Read as rows, every message crossed from the Kafka reader into Spark rows,
through Spark's JSON parser and a shuffle of rows, into Arrow for the join's
Python step, and its output back into rows and Arrow again for the driver:
most of the join's CPU went to those conversions. ``format("dkg_join_blocks")``
plans the same offset ranges as ``dkg_kafka`` (same offsets, same checkpoint);
each task parses its messages (:mod:`silver.join.parsing`), tags their shards
(:func:`silver.join.sharding.tag_shards`, the rule the local join uses) and
hands Spark one row per shard and block of rows (``silver.blocks``). Spark
still groups by shard, keeps the state and the checkpoints, and schedules.

Options: those of ``dkg_kafka``, plus ``side`` (0 left, 1 right), ``shards``
and ``groupKeys`` (each shard's grouping key, comma-separated).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.datasource import DataSourceStreamReader
from pyspark.sql.types import StructType

from core.kafka.admin import BrokerError
from core.kafka.client import KafkaClient
from core.kafka.source import (
    KafkaRange,
    KafkaSource,
    KafkaStreamReader,
    KafkaTopic,
    kafka_format,
    read_range,
    require_topic,
)
from silver.blocks import group_blocks
from silver.join.parsing import parse_join_messages
from silver.join.sharding import tag_shards

__all__ = ["JOIN_BLOCKS_ARROW", "JOIN_BLOCKS_DDL", "JoinBlocksSource", "join_blocks",
           "read_join_blocks"]  # fmt: skip

JOIN_BLOCKS_DDL = "shard_group INT, shard INT, rows LONG, block BINARY"
"""A shard's rows (``silver.join.sharding.TAGGED_ARROW``) packed; ``shard_group`` is the grouping key."""
JOIN_BLOCKS_ARROW = pa.schema([("shard_group", pa.int32()), ("shard", pa.int32()),
                               ("rows", pa.int64()), ("block", pa.binary())])  # fmt: skip


def join_blocks(kafka: pa.RecordBatch, side: int, shards: int,
                group_keys: Sequence[int]) -> pa.RecordBatch:  # fmt: skip
    """Kafka rows of one topic -> one block row per shard they reach (``JOIN_BLOCKS_DDL``)."""
    tagged = tag_shards(parse_join_messages(kafka, side), shards)
    return group_blocks(tagged, tagged["shard"].to_numpy(), group_keys, JOIN_BLOCKS_ARROW)


class _JoinBlocksReader(KafkaStreamReader):
    """``dkg_kafka``'s planning; each task yields its range as shard blocks."""

    def __init__(self, options: dict[str, str], client: KafkaClient) -> None:
        """Kafka options plus the side, the shard count and the shards' grouping keys."""
        super().__init__(options, client)
        lowered = {k.lower(): v for k, v in options.items()}
        try:
            self.side, self.shards = int(lowered["side"]), int(lowered["shards"])
            self.group_keys = [int(key) for key in lowered["groupkeys"].split(",")]
        except KeyError as exc:
            option = exc.args[0]
            raise BrokerError(f"the dkg_join_blocks source needs the option {option!r}") from None

    def _read_range(self, kafka_range: KafkaRange) -> Iterator[pa.RecordBatch]:
        """Read, parse, shard and pack the range (runs on executors)."""
        for batch in read_range(kafka_range, self.client, values_only=True):
            yield join_blocks(batch, self.side, self.shards, self.group_keys)


class JoinBlocksSource(KafkaSource):
    """``format("dkg_join_blocks")``: a join topic as shard blocks; bound to a Kafka client."""

    @classmethod
    def name(cls) -> str:
        """The format name."""
        return "dkg_join_blocks"

    def schema(self) -> str:
        """One row per shard and block."""
        return JOIN_BLOCKS_DDL

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        """The micro-batch reader."""
        return _JoinBlocksReader(dict(self.options), self.bound_client())


def read_join_blocks(spark: SparkSession, topic: KafkaTopic, side: int, shards: int,
                     group_keys: Sequence[int]) -> DataFrame:  # fmt: skip
    """A join topic as a stream of shard blocks.

    Raises:
        BrokerError: Kafka cannot be reached or has no such topic (asked here, on
            the driver, so the message is not buried in a failed query's trace).
    """
    require_topic(topic)
    reader = spark.readStream.format(kafka_format(spark, topic.client, JoinBlocksSource))
    reader = reader.options(**topic.options(), side=str(side), shards=str(shards),
                            groupKeys=",".join(map(str, group_keys)))  # fmt: skip
    return reader.load()
