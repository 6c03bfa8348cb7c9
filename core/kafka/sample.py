"""A read-only sample of a Kafka topic: evenly spaced chunks of every partition.

``dkg advise`` (and the main job, to learn a user's topic's tuple rate) look at
a topic without changing anything on the cluster: no topic is created (the
topic list is asked without naming the topic, which could auto-create it), no
consumer group is joined (partitions are assigned, never subscribed), and no
offset is committed (auto-commit and the offset store are off, and nothing
calls commit). librdkafka insists on a ``group.id`` even so; it is never used.

What is read: at most ``max_messages`` messages, taken from every partition in
proportion to its size, so a key that keyed partitioning put in one big
partition keeps its share of the sample. Each partition's share is read as
``chunks`` runs of consecutive offsets spread evenly between its low and high
watermarks, so the sample spans the topic's whole history (drift of the hot set
shows) rather than only its head. The runs are read in an order that covers the
span early (first, last, middle, ...), so a sample cut short by ``max_seconds``
still spans the topic.

Measured on the embedded broker (a 1,000,000-message topic, 4 partitions,
2-core machine shared with other work): 200,000 messages in 8 chunks per
partition read in 2.1-4.2 s with two readers (4.9 s with one, 4.4-4.7 s with
three or four). That broker answers every fetch with the
whole rest of the partition, so a chunk near a partition's start costs about
1 µs per message after it; a real Kafka stops at ``max.partition.fetch.bytes``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from core.kafka.admin import BrokerError, check_reachable
from core.kafka.client import KafkaClient
from core.kafka.records import check_timestamps

__all__ = ["ChunkPlan", "SampledChunk", "TopicSample", "plan_chunks", "read_order", "sample_topic"]

logger = logging.getLogger(__name__)

_TIMEOUT_S = 10.0
_POLL_S = 0.5
IDLE_SECONDS = 5.0
"""A chunk that gets no message for this long ends where it is (a gap left by compaction
or transaction markers before the high watermark)."""
READERS = 2
"""Chunks read at once, each by its own consumer (measured above)."""

# Never overridden by the user's settings: these keep the sample read-only.
_READ_ONLY = {"enable.auto.commit": False, "enable.auto.offset.store": False}


@dataclass(frozen=True)
class ChunkPlan:
    """Offsets ``[start, end)`` of one partition, the ``index``-th of its chunks (0: the oldest)."""

    partition: int
    index: int
    start: int
    end: int

    @property
    def size(self) -> int:
        """Messages planned."""
        return self.end - self.start


@dataclass(frozen=True)
class SampledChunk:
    """What was read of one planned chunk, in offset order.

    Attributes:
        plan: the chunk asked for.
        offsets: offset of each message read (int64).
        timestamps_ms: its Kafka timestamp, epoch ms (int64).
        values: its value (None: a tombstone).
    """

    plan: ChunkPlan
    offsets: np.ndarray
    timestamps_ms: np.ndarray
    values: list[bytes | None]

    def __len__(self) -> int:
        return len(self.values)


@dataclass(frozen=True)
class TopicSample:
    """A topic's sample.

    Attributes:
        topic: the topic.
        watermarks: per partition, its (low, high) watermarks when sampled.
        chunks: the chunks read, in read order.
        planned: every chunk planned (:func:`plan_chunks`), read or not.
        seconds: wall time of the sampling.
        complete: every planned message was read (False: cut short by the time limit).
    """

    topic: str
    watermarks: dict[int, tuple[int, int]]
    chunks: list[SampledChunk] = field(default_factory=list)
    planned: list[ChunkPlan] = field(default_factory=list)
    seconds: float = 0.0
    complete: bool = True

    @property
    def messages(self) -> int:
        """Messages read."""
        return sum(len(c) for c in self.chunks)

    @property
    def topic_messages(self) -> int:
        """Messages the topic holds between its watermarks."""
        return sum(high - low for low, high in self.watermarks.values())

    def holds_ends(self) -> bool:
        """Whether the oldest and the newest planned chunk of every planned partition were read."""
        read = {(c.plan.partition, c.plan.index) for c in self.chunks if len(c)}
        last: dict[int, int] = {}
        for plan in self.planned:
            last[plan.partition] = max(last.get(plan.partition, 0), plan.index)
        return bool(last) and all({(p, 0), (p, i)} <= read for p, i in last.items())


def plan_chunks(watermarks: Mapping[int, tuple[int, int]], max_messages: int,
                chunks: int) -> list[ChunkPlan]:  # fmt: skip
    """Where to read: each partition's share of ``max_messages``, as up to ``chunks`` runs.

    A partition of ``size`` messages gets ``size * min(1, max_messages / total)``
    (rounded) of them; taken whole when that is all of it, else as ``chunks``
    runs of about equal length whose starts are evenly spaced from its low
    watermark to its high watermark minus a run (the first run is the oldest
    messages, the last the newest).

    Args:
        watermarks: per partition, its (low, high) watermarks.
        max_messages: the sample's size limit (at least 1).
        chunks: runs per partition (at least 1).
    """
    total = sum(max(0, high - low) for low, high in watermarks.values())
    if total == 0:
        return []
    fraction = min(1.0, max_messages / total)
    plans = []
    for partition, (low, high) in sorted(watermarks.items()):
        size = max(0, high - low)
        take = min(size, round(size * fraction))
        if take == 0:
            continue
        if take == size:
            plans.append(ChunkPlan(partition, 0, low, high))
            continue
        runs = min(chunks, take)
        for index in range(runs):
            length = take * (index + 1) // runs - take * index // runs
            # Starts step by at least a run: (size - length) / (runs - 1) >= take / runs.
            start = low + ((size - length) * index // (runs - 1) if runs > 1 else 0)
            plans.append(ChunkPlan(partition, index, start, start + length))
    return plans


def read_order(count: int) -> list[int]:
    """Chunk indexes ``0..count-1``, each next one as far as possible from those before.

    ``[0, 7, 3, 5, 1, 2, 4, 6]`` for 8 (ties to the older): a sample cut short after a
    few rounds still holds the oldest, the newest and the middle of the topic.
    """
    if count <= 0:
        return []
    order = [0]
    rest = list(range(1, count))
    while rest:
        best = max(rest, key=lambda j: (min(abs(j - i) for i in order), -j))
        order.append(best)
        rest.remove(best)
    return order


def _consumer(client: KafkaClient) -> Any:  # confluent-kafka is untyped
    from confluent_kafka import Consumer

    settings = client.consumer_settings(**{
        "group.id": "dkg-advise", "client.id": "dkg-advise", "enable.partition.eof": False,
        "log_level": 3})  # fmt: skip
    return Consumer({**settings, **_READ_ONLY})


def _watermarks(client: KafkaClient, topic: str) -> dict[int, tuple[int, int]]:
    from confluent_kafka import KafkaException, TopicPartition

    consumer = _consumer(client)
    try:
        # All topics: naming the topic could make the broker auto-create it.
        metadata = consumer.list_topics(timeout=_TIMEOUT_S).topics.get(topic)
        if metadata is None:
            raise BrokerError(f"topic {topic!r} does not exist on {client.bootstrap}")
        marks = {}
        for partition in sorted(metadata.partitions):
            low, high = consumer.get_watermark_offsets(TopicPartition(topic, partition),
                                                       timeout=_TIMEOUT_S)  # fmt: skip
            marks[partition] = (int(low), int(high))
        return marks
    except KafkaException as exc:
        raise BrokerError(f"cannot read the offsets of {topic} on {client.bootstrap}: "
                          f"{exc}") from None  # fmt: skip
    finally:
        consumer.close()


def _read_chunk(client: KafkaClient, topic: str, plan: ChunkPlan,
                deadline: float) -> tuple[SampledChunk, bool]:  # fmt: skip
    """The chunk's messages, and whether it was read to its end (not cut by the deadline)."""
    from confluent_kafka import KafkaException, TopicPartition

    offsets: list[int] = []
    stamps: list[int] = []
    values: list[bytes | None] = []
    if time.monotonic() >= deadline:  # its turn came too late
        return SampledChunk(plan, np.empty(0, np.int64), np.empty(0, np.int64), []), False
    consumer = _consumer(client)
    try:
        consumer.assign([TopicPartition(topic, plan.partition, plan.start)])
        position, idle_since, finished = plan.start, time.monotonic(), True
        while position < plan.end:
            if time.monotonic() >= deadline:
                finished = False
                break
            records = consumer.consume(num_messages=min(50_000, plan.end - position),
                                       timeout=_POLL_S)  # fmt: skip
            for record in records:
                error = record.error()
                if error is not None:
                    # librdkafka retries transient errors itself; a chunk that gets
                    # nothing more ends at the idle limit below.
                    if error.fatal():
                        raise BrokerError(f"cannot read {topic}[{plan.partition}] on "
                                          f"{client.bootstrap}: {error.str()}")  # fmt: skip
                    logger.debug("%s[%d]: %s", topic, plan.partition, error.str())
                    continue
                offset = record.offset()
                if plan.start <= offset < plan.end:
                    offsets.append(offset)
                    stamps.append(record.timestamp()[1])
                    values.append(record.value())
                position = max(position, offset + 1)
            if records:
                idle_since = time.monotonic()
            elif time.monotonic() - idle_since > IDLE_SECONDS:
                logger.warning("%s[%d]: nothing past offset %d within %.0f s (planned up to %d)",
                               topic, plan.partition, position, IDLE_SECONDS, plan.end)  # fmt: skip
                break
    except KafkaException as exc:
        raise BrokerError(f"cannot read {topic}[{plan.partition}] on {client.bootstrap}: "
                          f"{exc}") from None  # fmt: skip
    finally:
        consumer.close()
    check_timestamps(topic, plan.partition, offsets, stamps)  # before pandas reads them
    chunk = SampledChunk(plan, np.asarray(offsets, np.int64), np.asarray(stamps, np.int64), values)
    return chunk, finished


def sample_topic(client: KafkaClient, topic: str, max_messages: int = 200_000,
                 max_seconds: float = 15.0, chunks: int = 8,
                 progress: Callable[[int], None] | None = None) -> TopicSample:  # fmt: skip
    """Read a sample of ``topic`` without changing anything on the cluster.

    Args:
        client: the Kafka.
        topic: an existing topic.
        max_messages: at most this many messages (spread as :func:`plan_chunks` says).
        max_seconds: stop reading after this long (the sample is then marked incomplete).
        chunks: runs of consecutive offsets per partition.
        progress: called with the messages read so far after each chunk.

    Raises:
        BrokerError: Kafka cannot be reached, or has no such topic.
    """
    started = time.monotonic()
    check_reachable(client.bootstrap)
    watermarks = _watermarks(client, topic)
    plans = plan_chunks(watermarks, max_messages, chunks)
    deadline = started + max_seconds
    rounds = max((p.index for p in plans), default=-1) + 1
    order = {index: rank for rank, index in enumerate(read_order(rounds))}
    read: list[SampledChunk] = []
    complete = True
    # No barrier between rounds: a reader takes the next chunk as soon as it is free.
    with ThreadPoolExecutor(READERS, thread_name_prefix="dkg-sample") as pool:
        futures = [pool.submit(_read_chunk, client, topic, plan, deadline)
                   for plan in sorted(plans, key=lambda p: (order[p.index], p.partition))]  # fmt: skip
        for future in futures:
            chunk, finished = future.result()
            read.append(chunk)
            complete = complete and finished
            if progress is not None:
                progress(sum(len(c) for c in read))
    if not complete:  # the caller reports it (TopicSample.complete)
        logger.debug("sampling %s stopped after %.0f s with %d of %d planned messages",
                     topic, max_seconds, sum(len(c) for c in read), sum(p.size for p in plans))  # fmt: skip
    return TopicSample(topic, watermarks, read, plans, time.monotonic() - started, complete)
