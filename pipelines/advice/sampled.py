"""A topic's sample as tuples, and the stream's tuples per second of event time.

The sample's messages are parsed by the format's silver parser, through
:func:`silver.parsing.parse_raw_events`, the step the job's routing runs, so a
message the job would quarantine is left out here too (and counted by reason).
The tuples are then put in the order the job routes them: event time, then
partition, offset and tuple index.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from bronze.datasets.base import TupleBatch
from core.kafka.client import KafkaClient
from core.kafka.sample import SampledChunk, TopicSample, sample_topic
from silver.parsing import parse_raw_events

__all__ = ["SampledTuples", "parse_sample", "topic_tuples_per_second", "tuples_from_batches",
           "tuples_per_second"]  # fmt: skip


@dataclass(frozen=True)
class SampledTuples:
    """Parsed tuples in routing order; the arrays are aligned.

    Attributes:
        keys: object array of ``str``.
        counts: int64 counts.
        event_times_ms: int64 epoch ms.
        partitions: the Kafka partition each tuple came from (int32; 0 for a file).
        chunks: the sample chunk each tuple came from (int32; 0 for a file).
        messages: messages read (parsed or not).
        unparsed: messages the parser refused, by reason.
        stream_tuples: the whole stream's tuples when known: a file's, or a topic's
            messages between its watermarks times each partition's tuples per
            sampled message, when the sample holds every partition's oldest and
            newest chunks; None otherwise.
    """

    keys: np.ndarray
    counts: np.ndarray
    event_times_ms: np.ndarray
    partitions: np.ndarray
    chunks: np.ndarray
    messages: int
    unparsed: dict[str, int] = field(default_factory=dict)
    stream_tuples: float | None = None

    def __len__(self) -> int:
        return len(self.keys)

    def batches(self, size: int) -> list[TupleBatch]:
        """The tuples as batches of at most ``size``, in order."""
        return [TupleBatch(self.keys[i:i + size], self.counts[i:i + size],
                           self.event_times_ms[i:i + size])
                for i in range(0, len(self), size)]  # fmt: skip


def _raw_rows(chunk: SampledChunk) -> pa.Table:
    n = len(chunk)
    return pa.table({
        "run_id": pa.repeat(pa.scalar("", pa.string()), n),
        "value": pa.array(chunk.values, pa.binary()),
        "timestamp": pa.array(chunk.timestamps_ms, pa.timestamp("ms", tz="UTC")),
        "partition": pa.repeat(pa.scalar(chunk.plan.partition, pa.int32()), n),
        "offset": pa.array(chunk.offsets, pa.int64()),
    })  # fmt: skip


def parse_sample(sample: TopicSample, source_type: str) -> SampledTuples:
    """The sample's tuples, parsed as ``source_type`` (e.g. ``ZIPF``; see
    :func:`silver.parsers.registry.source_type_for`), in routing order."""
    frames, refused = [], Counter[str]()
    for index, chunk in enumerate(sample.chunks):
        if not len(chunk):
            continue
        parsed = parse_raw_events(_raw_rows(chunk), source_type, splitters=1)
        failed = parsed["error"].is_valid()
        refused.update(parsed.filter(failed)["error"].to_pylist())
        # Filtered in Arrow: the tuples' columns have no nulls, so their integers stay exact.
        good = parsed.filter(pc.invert(failed))
        frames.append(pd.DataFrame({
            **{name: good[name].to_numpy(zero_copy_only=False) for name in
               ("key", "count", "event_time_ms", "partition", "offset", "tuple_index")},
            "chunk": np.full(good.num_rows, index, np.int32),
        }))  # fmt: skip
    if not frames:
        empty = np.empty(0, np.int64)
        return SampledTuples(np.empty(0, object), empty, empty, empty.astype(np.int32),
                             empty.astype(np.int32), sample.messages, dict(refused))  # fmt: skip
    rows = pd.concat(frames, ignore_index=True)
    stream = _stream_tuples(sample, rows["partition"].to_numpy())
    order = np.lexsort([rows[c].to_numpy() for c in
                        ("tuple_index", "offset", "partition", "event_time_ms")])  # fmt: skip
    rows = rows.take(order)
    return SampledTuples(rows["key"].to_numpy(dtype=object), rows["count"].to_numpy(),
                         rows["event_time_ms"].to_numpy(), rows["partition"].to_numpy(),
                         rows["chunk"].to_numpy(), sample.messages, dict(refused), stream)  # fmt: skip


def _stream_tuples(sample: TopicSample, partitions: np.ndarray) -> float | None:
    """The topic's tuples: each partition's messages times its tuples per sampled message
    (a partition too small to be sampled: the sample's average)."""
    if not sample.holds_ends() or sample.messages == 0:
        return None
    messages: Counter[int] = Counter()
    for chunk in sample.chunks:
        messages[chunk.plan.partition] += len(chunk)
    tuples = Counter(partitions.tolist())
    average = len(partitions) / sample.messages
    return float(sum((high - low) * (tuples[p] / messages[p] if messages[p] else average)
                     for p, (low, high) in sample.watermarks.items()))  # fmt: skip


def tuples_from_batches(batches: Sequence[TupleBatch]) -> SampledTuples:
    """Tuples read from a file (``key,count,timestamp_ms``): one partition, one chunk, in
    event-time order (a stable sort keeps the file's order within a time)."""
    keys = np.concatenate([b.keys for b in batches]) if batches else np.empty(0, object)
    counts = np.concatenate([b.counts for b in batches]) if batches else np.empty(0, np.int64)
    times = (np.concatenate([b.event_times_ms for b in batches]) if batches
             else np.empty(0, np.int64))  # fmt: skip
    order = np.argsort(times, kind="stable")
    zeros = np.zeros(len(keys), np.int32)
    return SampledTuples(keys[order].astype(object), counts[order].astype(np.int64),
                         times[order].astype(np.int64), zeros, zeros, len(keys),
                         stream_tuples=float(len(keys)))  # fmt: skip


def tuples_per_second(tuples: SampledTuples) -> float | None:
    """The stream's tuples per second of event time, estimated from its sample.

    When the stream's size is known (``stream_tuples``: a file, or a topic whose
    sample holds every partition's oldest and newest chunks), the rate is its
    tuples over its event-time span: ``(stream_tuples - 1) / (last - first)``, the
    first and last event times being the sample's (its oldest and newest
    chunks). This is the topic's mean rate even when a partition's rate changes
    over time (a hot key moving between partitions).

    Otherwise each chunk of n tuples counts n - 1 inter-arrival gaps over its
    span; a partition's chunks are pooled (their gaps over their spans, ignoring
    the time between chunks, which was not read) and the partitions, running
    side by side in event time, are added up. A partition whose chunks span no
    time adds nothing.

    Args:
        tuples: the sample's tuples (any order), with their partitions and chunks.

    Returns:
        Tuples per second of event time; None when the tuples span no time.
    """
    if len(tuples) == 0:
        return None
    span_ms = int(tuples.event_times_ms.max()) - int(tuples.event_times_ms.min())
    if span_ms <= 0:
        return None
    if tuples.stream_tuples is not None:
        return (tuples.stream_tuples - 1) * 1000.0 / span_ms
    return _pooled_chunks(tuples)


def _pooled_chunks(tuples: SampledTuples) -> float | None:
    frame = pd.DataFrame({"partition": tuples.partitions, "chunk": tuples.chunks,
                          "time": tuples.event_times_ms})  # fmt: skip
    per_chunk = frame.groupby(["partition", "chunk"])["time"].agg(["count", "min", "max"])
    per_chunk["gaps"] = per_chunk["count"] - 1
    per_chunk["span_ms"] = per_chunk["max"] - per_chunk["min"]
    spanned = per_chunk[per_chunk["span_ms"] > 0]
    if spanned.empty:
        return None
    per_partition = spanned.groupby(level="partition")[["gaps", "span_ms"]].sum()
    return float((per_partition["gaps"] * 1000.0 / per_partition["span_ms"]).sum())


def topic_tuples_per_second(client: KafkaClient, topic: str, source_type: str,
                            max_messages: int = 20_000,
                            max_seconds: float = 10.0) -> float | None:  # fmt: skip
    """A topic's tuples per second of event time, from a read-only sample.

    For the main job on a topic it did not generate: ``run.load`` becomes the queue
    model's speed through :func:`silver.queueing.arrival_speed` at this rate.

    Args:
        client: the Kafka.
        topic: an existing topic.
        source_type: its messages' parser (:func:`silver.parsers.registry.source_type_for`).
        max_messages: the sample's size (8 chunks per partition, spread over its offsets).
        max_seconds: the sampling's time limit.

    Returns:
        Tuples per second (see :func:`tuples_per_second`), or None when the topic
        is empty or its sample spans no event time.

    Raises:
        BrokerError: Kafka cannot be reached, or has no such topic.
    """
    sample = sample_topic(client, topic, max_messages, max_seconds)
    return tuples_per_second(parse_sample(sample, source_type))
