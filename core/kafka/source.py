"""Spark reads Kafka through a Python data source (``dkg_kafka``).

The Spark Kafka connector jar cannot be fetched on machines without Maven
Central, so this source speaks Kafka with confluent-kafka (librdkafka). Offsets are
``{"<partition>": next_offset}`` dicts that Spark checkpoints; each micro-batch
reads exactly ``[start, end)`` of every partition and yields Arrow record
batches with the columns of Spark's own Kafka source. The connection (a
:class:`~core.kafka.client.KafkaClient`, credentials included) rides in the
source class (:func:`core.spark.sources.bind_source`), never in options. Where
the native ``kafka`` format is on the classpath, :func:`read_kafka_stream` uses
it instead.

Options: ``topic``, ``startingOffsets`` (``earliest`` or ``latest``),
``maxOffsetsPerTrigger`` (optional cap per micro-batch), ``minPartitions``
(split a micro-batch's ranges into about this many pieces of similar size: keyed
topics are skewed, and one task per partition would leave a core idle while the
hot partition is read), ``maxTasks`` (pack the pieces into at most this many tasks,
each reading its pieces one after the other: a task costs about 0.1 s whatever it
reads, and more tasks than cores run in waves).
"""

from __future__ import annotations

import itertools
import logging
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any, ClassVar

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import (
    ReadAllAvailable,
    ReadLimit,
    ReadMaxRows,
    SupportsTriggerAvailableNow,
)
from pyspark.sql.types import StructType

from core.gc_pause import gc_paused
from core.kafka.admin import (
    BrokerError,
    end_offsets,
    librdkafka_problem,
    quiet_settings,
    topic_exists,
)
from core.kafka.client import KafkaClient
from core.kafka.records import check_timestamps
from core.packing import greedy_bins
from core.spark.sources import bind_source

__all__ = [
    "KAFKA_SCHEMA",
    "KafkaRange",
    "KafkaSource",
    "KafkaStreamReader",
    "KafkaTask",
    "KafkaTopic",
    "kafka_format",
    "read_kafka_stream",
    "read_range",
    "require_topic",
    "split_range",
]

logger = logging.getLogger(__name__)

KAFKA_SCHEMA = ("key binary, value binary, topic string, partition int, offset long, "
                "timestamp timestamp, timestampType int")  # fmt: skip
_ARROW_SCHEMA = pa.schema([
    ("key", pa.binary()), ("value", pa.binary()), ("topic", pa.string()),
    ("partition", pa.int32()), ("offset", pa.int64()),
    ("timestamp", pa.timestamp("us", tz="UTC")), ("timestampType", pa.int32()),
])  # fmt: skip
POLL_RECORDS = 50_000


@dataclass(frozen=True)
class KafkaRange:
    """Offsets ``[start, end)`` of one topic partition."""

    topic: str
    partition: int
    start: int
    end: int


@dataclass(frozen=True)
class KafkaTask(InputPartition):
    """The ranges one Spark task reads, one after the other."""

    ranges: tuple[KafkaRange, ...]


def _cap(start: dict[str, int], latest: dict[str, int], limit: int) -> dict[str, int]:
    """Spread ``limit`` new offsets over partitions, a fair share each, deterministically."""
    end = dict(start)
    remaining = limit
    pending = sorted(p for p in latest if latest[p] > start.get(p, 0))
    while remaining > 0 and pending:
        share = max(1, remaining // len(pending))
        for p in list(pending):
            take = min(share, latest[p] - end.get(p, 0), remaining)
            end[p] = end.get(p, 0) + take
            remaining -= take
            if end[p] >= latest[p]:
                pending.remove(p)
            if remaining == 0:
                break
    return {p: end.get(p, 0) for p in latest}


class KafkaStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """Plans micro-batches from the broker's end offsets; executors read the ranges."""

    def __init__(self, options: dict[str, str], client: KafkaClient) -> None:
        """Keep options and the connection only (Spark also builds readers just for planning)."""
        options = {k.lower(): v for k, v in options.items()}  # Spark hands them over lower-cased
        self.client = client
        try:
            self.topic = options["topic"]
        except KeyError as exc:
            raise BrokerError(f"the dkg_kafka source needs the option {exc.args[0]!r}") from None
        self.starting = options.get("startingoffsets", "earliest")
        cap = options.get("maxoffsetspertrigger")
        self.max_offsets = int(cap) if cap else None
        self.min_partitions = int(options.get("minpartitions") or 1)
        self.max_tasks = int(options.get("maxtasks") or 0) or None
        if self.max_tasks is not None and self.max_tasks < 1:
            raise BrokerError(f"the dkg_kafka source's maxTasks must be at least 1, not {self.max_tasks}")
        self._frozen: dict[str, int] | None = None

    def _latest(self) -> dict[str, int]:
        return {str(p): o for p, o in end_offsets(self.client, self.topic).items()}

    def initialOffset(self) -> dict[str, int]:
        """Offset 0 of every partition (``earliest``), or the current ends (``latest``)."""
        latest = self._latest()
        return latest if self.starting == "latest" else dict.fromkeys(latest, 0)

    def getDefaultReadLimit(self) -> ReadLimit:
        """``maxOffsetsPerTrigger`` as a row limit, else everything available."""
        return ReadMaxRows(self.max_offsets) if self.max_offsets else ReadAllAvailable()

    def prepareForTriggerAvailableNow(self) -> None:
        """An ``availableNow`` run ends at the offsets that exist when it starts."""
        self._frozen = self._latest()

    def latestOffset(self, start: dict[str, int], limit: ReadLimit) -> dict[str, int]:
        """The end offsets of the next micro-batch."""
        latest = self._frozen if self._frozen is not None else self._latest()
        if isinstance(limit, ReadMaxRows):
            return _cap(start, latest, limit.max_rows)
        return {p: max(o, start.get(p, 0)) for p, o in latest.items()}

    def partitions(self, start: dict[str, int], end: dict[str, int]) -> Sequence[InputPartition]:
        """The new messages of each partition, in ranges of about equal size, packed into
        at most ``maxTasks`` tasks."""
        ranges = [(int(p), start.get(p, 0), o)
                  for p, o in sorted(end.items(), key=lambda item: int(item[0]))
                  if o > start.get(p, 0)]  # fmt: skip
        pieces = [KafkaRange(self.topic, partition, first, last)
                  for partition, begin, stop in ranges
                  for first, last in split_range(begin, stop, _chunk(ranges, self.min_partitions))]  # fmt: skip
        if self.max_tasks is None or len(pieces) <= self.max_tasks:
            return [KafkaTask((piece,)) for piece in pieces]
        # Pieces are in partition and offset order: so is each task's share of them.
        weights = [piece.end - piece.start for piece in pieces]
        return [KafkaTask(tuple(pieces[i] for i in group))
                for group in greedy_bins(weights, self.max_tasks)]  # fmt: skip

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:  # type: ignore[override]
        """Exactly the task's offset ranges, one after the other (runs on executors)."""
        assert isinstance(partition, KafkaTask)  # noqa: S101 - Spark contract
        for kafka_range in partition.ranges:
            yield from self._read_range(kafka_range)

    def _read_range(self, kafka_range: KafkaRange) -> Iterator[pa.RecordBatch]:
        """One range's messages as Arrow batches of Kafka's columns; readers of other
        schemas override it."""
        return read_range(kafka_range, self.client)

    def commit(self, end: dict[str, int]) -> None:
        """Nothing to do: Spark's checkpoint holds the offsets."""


def _chunk(ranges: Sequence[tuple[int, int, int]], tasks: int) -> int:
    total = sum(stop - begin for _, begin, stop in ranges)
    return max(1, -(-total // max(1, tasks)))


def split_range(begin: int, stop: int, chunk: int) -> list[tuple[int, int]]:
    """``[begin, stop)`` in consecutive pieces of equal size, none longer than ``chunk``."""
    pieces = max(1, -(-(stop - begin) // chunk))
    bounds = [begin + (stop - begin) * i // pieces for i in range(pieces + 1)]
    return list(itertools.pairwise(bounds))


def read_range(kafka_range: KafkaRange, client: KafkaClient,
               values_only: bool = False) -> Iterator[pa.RecordBatch]:  # fmt: skip
    """Exactly offsets ``[start, end)`` of one partition, as Arrow batches of Kafka's columns.

    Args:
        kafka_range: the partition and its offsets.
        client: the connection.
        values_only: only ``value``, ``partition`` and ``offset``, for a reader that
            parses the values and needs nothing else of a message.
    """
    to_arrow = _values_to_arrow if values_only else _to_arrow
    # librdkafka (confluent-kafka) reads several times faster than kafka-python's
    # per-record Python loop, which would cap ingest below the pipeline's target.
    from confluent_kafka import Consumer, TopicPartition

    errors: list[Any] = []  # librdkafka's, for the message of a read that fails
    settings = client.consumer_settings(**{
        "group.id": "dkg-spark", "client.id": "dkg-spark", "enable.auto.commit": False,
        "enable.partition.eof": False, **quiet_settings(errors),
    })  # fmt: skip
    # Never the user's setting: a range whose messages are gone must fail, not jump to
    # another offset and skip what lies between without a word.
    consumer = Consumer({**settings, "auto.offset.reset": "error"})
    closed = False
    try:
        consumer.assign([TopicPartition(kafka_range.topic, kafka_range.partition, kafka_range.start)])
        position, last_progress = kafka_range.start, time.monotonic()
        while position < kafka_range.end:
            # Ask for no more than the range still holds: consume() waits out its
            # timeout whenever fewer messages than asked for exist.
            wanted = min(POLL_RECORDS, kafka_range.end - position)
            with gc_paused():  # tens of thousands of message objects per poll
                polled = consumer.consume(num_messages=wanted, timeout=0.5)
                records = [m for m in polled
                           if m.error() is None and kafka_range.start <= m.offset() < kafka_range.end]  # fmt: skip
                if len(records) < len(polled):
                    _raise_if_gone(consumer, kafka_range, position, polled)
                batch = to_arrow(records, kafka_range.topic, kafka_range.partition) if records else None
                if records:
                    position = records[-1].offset() + 1
                del records, polled
            if position >= kafka_range.end:  # before the last batch goes out: an idle consumer
                consumer.close()  # at the partition's end keeps fetching
                closed = True
            if batch is None:
                if time.monotonic() - last_progress > client.read_stall_s:
                    raise _stalled(kafka_range, position, client, errors)
                continue
            last_progress = time.monotonic()
            yield batch
    finally:
        if not closed:
            consumer.close()


def _raise_if_gone(consumer: Any, kafka_range: KafkaRange, position: int, polled: list[Any]) -> None:
    """Fail if a poll's errors say offset ``position`` is gone (below the partition's first)."""
    from confluent_kafka import KafkaException, TopicPartition

    if not any(m.error() is not None and m.error().name() == "_AUTO_OFFSET_RESET" for m in polled):
        return
    try:
        low, _ = consumer.get_watermark_offsets(TopicPartition(kafka_range.topic, kafka_range.partition),
                                                timeout=10.0, cached=False)  # fmt: skip
    except KafkaException:
        low = None
    first = f"offset {low}" if low is not None else "a later offset"
    raise BrokerError(
        f"{kafka_range.topic}[{kafka_range.partition}]: offsets {position} to {kafka_range.end - 1} are no longer in "
        f"Kafka, whose partition now starts at {first}: older messages were deleted "
        "(retention.ms, retention.bytes or delete_records) before this run read them; dkg run "
        "reads a topic from offset 0, even with another --warehouse: write the data to a new "
        "--topic and run on that"
    )


def _stalled(kafka_range: KafkaRange, position: int, client: KafkaClient, errors: list[Any]) -> BrokerError:
    """The error of a range that stopped arriving; librdkafka's own error says why, if it has one."""
    problem = librdkafka_problem(errors)
    why = (f": Kafka at {client.bootstrap} does not answer ({problem}); is the broker still "
           "running?" if problem else "")  # fmt: skip
    return BrokerError(f"{kafka_range.topic}[{kafka_range.partition}]: no messages past offset {position} for "
                       f"{client.read_stall_s:g} s (expected up to offset {kafka_range.end - 1}){why}")  # fmt: skip


def _to_arrow(records: list, topic: str, partition: int) -> pa.RecordBatch:
    n = len(records)
    stamps = [r.timestamp() for r in records]  # (type, epoch ms) pairs
    offsets = [r.offset() for r in records]
    millis = pa.array([t[1] for t in stamps], pa.int64())
    check_timestamps(topic, partition, offsets, millis)
    # Scaled in Arrow: 2.4x faster than multiplying each one in Python (50,000 a poll).
    micros = pc.multiply(millis, 1000).cast(pa.timestamp("us", tz="UTC"))
    return pa.RecordBatch.from_arrays([
        pa.array([r.key() for r in records], pa.binary()),
        pa.array([r.value() for r in records], pa.binary()),
        pa.array([topic] * n, pa.string()),
        pa.array([partition] * n, pa.int32()),
        pa.array(offsets, pa.int64()),
        micros,
        # librdkafka numbers types from 1 (create time); Kafka's own field from 0.
        pa.array([max(t[0] - 1, -1) for t in stamps], pa.int32()),
    ], schema=_ARROW_SCHEMA)  # fmt: skip


_VALUES_ARROW = pa.schema([_ARROW_SCHEMA.field(name) for name in ("value", "partition", "offset")])


def _values_to_arrow(records: list, topic: str, partition: int) -> pa.RecordBatch:
    return pa.RecordBatch.from_arrays([
        pa.array([r.value() for r in records], pa.binary()),
        pa.repeat(pa.scalar(partition, pa.int32()), len(records)),
        pa.array([r.offset() for r in records], pa.int64()),
    ], schema=_VALUES_ARROW)  # fmt: skip


class KafkaSource(DataSource):
    """``dkg_kafka``: a Kafka topic as a stream; :func:`kafka_format` binds the connection."""

    client: ClassVar[KafkaClient | None] = None

    @classmethod
    def name(cls) -> str:
        """The format name."""
        return "dkg_kafka"

    def schema(self) -> str:
        """Spark's Kafka source columns."""
        return KAFKA_SCHEMA

    def bound_client(self) -> KafkaClient:
        """The Kafka client this source was bound to (:func:`kafka_format`)."""
        if self.client is None:
            raise BrokerError(f"{self.name()} has no connection: register it with kafka_format()")
        return self.client

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        """The micro-batch reader."""
        return KafkaStreamReader(dict(self.options), self.bound_client())


def kafka_format(spark: SparkSession, client: KafkaClient,
                 source: type[KafkaSource] = KafkaSource) -> str:  # fmt: skip
    """Register ``source`` bound to ``client`` in this session; returns its format name."""
    return bind_source(spark, source, client=client)


@dataclass(frozen=True)
class KafkaTopic:
    """A topic to stream, before it becomes a DataFrame.

    Jobs take this rather than rows when they may read the topic their own way
    (bronze lands it straight to Parquet with the delta-rs backend).
    """

    client: KafkaClient
    topic: str
    starting: str = "earliest"
    max_offsets_per_trigger: int | None = None
    min_partitions: int | None = None
    max_tasks: int | None = None  # the project's source only: Spark's own has no such option

    def options(self) -> dict[str, str]:
        """The ``dkg_kafka`` reader options for this topic (no connection settings)."""
        options = {"topic": self.topic, "startingOffsets": self.starting}
        if self.max_offsets_per_trigger:
            options["maxOffsetsPerTrigger"] = str(self.max_offsets_per_trigger)
        if self.min_partitions:
            options["minPartitions"] = str(self.min_partitions)
        if self.max_tasks:
            options["maxTasks"] = str(self.max_tasks)
        return options

    def in_tasks(self, tasks: int) -> KafkaTopic:
        """The topic read in ``tasks`` tasks, unless its pieces are set already.

        A task costs about 0.1 s whatever it reads: ranges are cut into pieces of half a
        task, packed longest first, so tasks come out of similar size however many and
        however skewed the partitions.
        """
        if self.min_partitions is not None:
            return self
        return replace(self, min_partitions=2 * tasks, max_tasks=tasks)

    def rows(self, spark: SparkSession) -> DataFrame:
        """The topic as a streaming DataFrame of Kafka's columns."""
        return read_kafka_stream(spark, self)


def _native_kafka(spark: SparkSession) -> bool:
    jvm = getattr(spark.sparkContext, "_jvm", None)
    try:
        jvm.java.lang.Class.forName("org.apache.spark.sql.kafka010.KafkaSourceProvider")  # type: ignore[union-attr]
    except Exception:
        return False
    return True


def _native_options(client: KafkaClient) -> dict[str, str]:
    # Spark's own connector passes `kafka.`-prefixed options to the Java client, whose
    # names differ from librdkafka's for credentials and certificates.
    settings = client.consumer_settings()
    options = {"kafka.bootstrap.servers": client.bootstrap,
               "kafka.security.protocol": settings.get("security.protocol", "plaintext").upper()}
    if "sasl.mechanism" in settings:
        module = ("plain.PlainLoginModule" if settings["sasl.mechanism"] == "PLAIN"
                  else "scram.ScramLoginModule")
        options["kafka.sasl.mechanism"] = settings["sasl.mechanism"]
        options["kafka.sasl.jaas.config"] = (
            f"org.apache.kafka.common.security.{module} required "
            f'username="{settings.get("sasl.username", "")}" '
            f'password="{settings.get("sasl.password", "")}";')
    if "ssl.ca.location" in settings:
        options["kafka.ssl.truststore.type"] = "PEM"
        options["kafka.ssl.truststore.location"] = settings["ssl.ca.location"]
    return options  # fmt: skip


def require_topic(topic: KafkaTopic) -> None:
    """Fail unless the topic exists: asked on the driver, so the message is not buried
    in a failed query's trace.

    Raises:
        BrokerError: Kafka cannot be reached or has no such topic.
    """
    if not topic_exists(topic.client, topic.topic):
        raise BrokerError(f"topic {topic.topic!r} does not exist on {topic.client.bootstrap}")


def read_kafka_stream(spark: SparkSession, topic: KafkaTopic) -> DataFrame:
    """A Kafka topic as a streaming DataFrame (native connector when present).

    Raises:
        BrokerError: Kafka cannot be reached or has no such topic (asked here, on
            the driver, so the message is not buried in a failed query's trace).
    """
    require_topic(topic)
    if not _native_kafka(spark):
        return spark.readStream.format(kafka_format(spark, topic.client)).options(
            **topic.options()).load()
    reader = spark.readStream.format("kafka").options(**_native_options(topic.client))
    reader = reader.option("subscribe", topic.topic).option("startingOffsets", topic.starting)
    if topic.max_offsets_per_trigger:
        reader = reader.option("maxOffsetsPerTrigger", str(topic.max_offsets_per_trigger))
    if topic.min_partitions:
        reader = reader.option("minPartitions", str(topic.min_partitions))
    return reader.load().select(*[c.split()[0] for c in KAFKA_SCHEMA.split(", ")])
