"""The soak's moving parts: paced producers, the broker's retention, the JVM heap, the tables.

The producers run in processes of their own (``spawn``), so generating and
sending the messages costs the pipeline's processes nothing. Both stamp each
message with its creation time, which runs at the wall clock's pace, so the
retention can cut the topics by time as ``retention.ms`` does.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Sequence
from typing import Any

from bench.procfs import ProcessSampler
from bronze.datasets.base import DatasetSpec
from bronze.datasets.registry import make_dataset
from bronze.join_data import JoinDataSpec, generate
from bronze.join_data.producer import encode_value
from bronze.producer import produce
from core.kafka.client import KafkaClient
from core.kafka.producer import DeliveryErrors, open_producer, send

__all__ = ["HeapSampler", "Retention", "memory_report", "produce_join", "produce_zipf"]

logger = logging.getLogger("bench.soak")

_HEAP_EVERY_S = 5.0
_RETENTION_EVERY_S = 15.0


def produce_zipf(kafka: KafkaClient, topics: Sequence[str], rate: int, seconds: float) -> None:
    """ZIPF messages into ``topics[0]`` at ``rate`` msg/s for ``seconds`` (event time = send time)."""
    from bench.console import configure_logging

    configure_logging()
    spec = DatasetSpec(name="ZIPF", messages=int(rate * seconds), rate=rate,
                       start_ms=time.time_ns() // 1_000_000)  # fmt: skip
    try:
        produce(make_dataset(spec), kafka, topics[0], None, speed=1.0, batch_size=2_000,
                wall_clock_timestamps=True)  # fmt: skip
    except Exception:  # the soak reports what reached the topic; the cause goes to the log
        logger.exception("the producer stopped")


def produce_join(kafka: KafkaClient, topics: Sequence[str], rate: int, seconds: float) -> None:
    """Join records into ``topics`` (left, right) at ``rate`` msg/s for ``seconds``.

    Generated one minute at a time (distinct seeds, so distinct ids), each minute's
    records starting after the last one's latest, so creation time only moves on;
    the closing heartbeats of a finite data set are left out.
    """
    from bench.console import configure_logging

    configure_logging()
    lefts_per_s = rate / 1.9  # a left and, for 90 % of them, its right
    first_ms = start_ms = time.time_ns() // 1_000_000
    failures = DeliveryErrors()
    producer = open_producer(kafka, "soak-join-producer", failures)
    began, segment = time.monotonic(), 0
    while time.monotonic() - began < seconds and failures.first is None:
        spec = JoinDataSpec(lefts=int(lefts_per_s * 60), rate=lefts_per_s, start_ms=start_ms,
                            seed=segment, close_ms=0)  # fmt: skip
        records = generate(spec).records
        records = records[records["id"].notna()]
        columns = (records[c].tolist() for c in ("side", "partition", "id", "created_ms"))
        for n, (side, partition, record_id, created) in enumerate(zip(*columns, strict=True)):
            send(producer, topics[side], record_id.encode(), encode_value(record_id, created),
                 created, partition=partition)  # fmt: skip
            if n % 2_000 == 0:
                producer.poll(0)
                time.sleep(max(0.0, (created - first_ms) / 1000 - (time.monotonic() - began)))
        start_ms = int(records["created_ms"].max()) + spec.jump_max_ms + 1
        segment += 1
    producer.flush(60.0)
    if failures.first:
        logger.error("the join producer stopped: %s", failures.first)


def _consumed(spark: Any) -> dict[int, int] | None:
    """Per partition number, the lowest offset every Kafka source of the running queries has
    read up to (committed), or None before each has finished a batch."""
    offsets: list[dict[str, Any]] = []
    for query in spark.streams.active:
        progress = query.lastProgress
        if progress is None:
            return None
        for source in progress["sources"]:
            end = source["endOffset"]
            end = json.loads(end) if isinstance(end, str) else end
            if isinstance(end, dict) and end and all(k.isdigit() for k in end):
                offsets.append(end)
    if not offsets:
        return None
    return {int(p): min(int(o[p]) for o in offsets) for p in offsets[0]}


class Retention(threading.Thread):
    """Deletes messages older than ``seconds`` from ``topics`` every few seconds, as
    ``retention.ms`` would, but never one the pipeline's queries have not read yet.

    The Kafka sources of the join read partition p of both topics; the lowest of
    their offsets for p is the cut for either topic (safe whichever source is which).
    """

    def __init__(self, spark: Any, kafka: KafkaClient, topics: Sequence[str], partitions: int,
                 seconds: float, stop: threading.Event,
                 every_s: float = _RETENTION_EVERY_S) -> None:  # fmt: skip
        """Cut ``topics`` (of ``partitions`` each) at ``seconds`` of age, every ``every_s``,
        until ``stop`` is set."""
        super().__init__(daemon=True)
        self.spark, self.kafka, self.topics, self.seconds = spark, kafka, topics, seconds
        self.every_s = every_s
        self.partitions, self.stop_event = partitions, stop
        self.deleted_up_to: dict[str, int] = {}
        self.lag = 0  # messages the queries have not read yet

    def run(self) -> None:
        from confluent_kafka import Consumer, TopicPartition
        from confluent_kafka.admin import AdminClient

        settings = {"group.id": "soak-retention", "log_level": 3}
        consumer = Consumer(self.kafka.consumer_settings(**settings))
        admin = AdminClient(self.kafka.admin_settings(log_level=3))
        while not self.stop_event.wait(self.every_s):
            consumed = _consumed(self.spark)
            if consumed is None:
                continue
            # High watermarks only: a fetch from this broker would return the whole backlog.
            ends = [consumer.get_watermark_offsets(TopicPartition(t, p), timeout=10)[1]
                    for t in self.topics for p in range(self.partitions)]  # fmt: skip
            self.lag = sum(ends) - sum(consumed.values()) * len(self.topics)
            cut_ms = time.time_ns() // 1_000_000 - int(self.seconds * 1000)
            wanted = [
                TopicPartition(t, p, cut_ms) for t in self.topics for p in range(self.partitions)
            ]
            aged = consumer.offsets_for_times(wanted, timeout=10)
            cuts = [TopicPartition(tp.topic, tp.partition, min(tp.offset, consumed.get(tp.partition, 0)))
                    for tp in aged if tp.offset > 0]  # fmt: skip
            cuts = [
                tp
                for tp in cuts
                if tp.offset > self.deleted_up_to.get(f"{tp.topic}/{tp.partition}", 0)
            ]
            if cuts:
                for future in admin.delete_records(cuts).values():
                    future.result(timeout=30)
                self.deleted_up_to.update({f"{tp.topic}/{tp.partition}": tp.offset for tp in cuts})
        consumer.close()


class HeapSampler(threading.Thread):
    """The Spark JVM's heap every few seconds, through its management beans (py4j)."""

    def __init__(self, spark: Any, stop: threading.Event) -> None:
        """Sample the JVM of ``spark`` until ``stop`` is set."""
        super().__init__(daemon=True)
        self.jvm, self.stop_event = spark.sparkContext._jvm, stop  # noqa: SLF001 - py4j only
        self.samples: list[tuple[float, dict[str, float]]] = []

    def _sample(self) -> dict[str, float]:
        factory = self.jvm.java.lang.management.ManagementFactory
        heap = factory.getMemoryMXBean().getHeapMemoryUsage()
        pools = {pool.getName() for pool in factory.getMemoryPoolMXBeans()
                 if pool.getType().name() == "HEAP"}  # fmt: skip
        # The heap right after the latest collection of any kind (young ones included).
        latest = max((bean.getLastGcInfo() for bean in factory.getGarbageCollectorMXBeans()
                      if bean.getLastGcInfo() is not None),
                     key=lambda info: info.getEndTime(), default=None)  # fmt: skip
        after = latest.getMemoryUsageAfterGc() if latest is not None else {}
        after_gc = sum(after[name].getUsed() for name in pools if name in after)
        return {"heap_used": heap.getUsed() / 1e6, "heap_committed": heap.getCommitted() / 1e6,
                "heap_after_gc": after_gc / 1e6}  # fmt: skip

    def run(self) -> None:
        started = time.monotonic()
        while True:
            self.samples.append((time.monotonic() - started, self._sample()))
            if self.stop_event.wait(_HEAP_EVERY_S):
                return

    def per_minute(self) -> list[dict[str, int]]:
        """Per minute: the largest heap committed and used after GC, and the smallest used after GC."""
        minutes: dict[int, list[dict[str, float]]] = {}
        for at, sample in self.samples:
            minutes.setdefault(int(at // 60), []).append(sample)
        return [{"heap_committed": round(max(s["heap_committed"] for s in samples)),
                 "heap_after_gc_max": round(max(s["heap_after_gc"] for s in samples)),
                 "heap_after_gc_min": round(min(s["heap_after_gc"] for s in samples))}
                for _, samples in sorted(minutes.items())]  # fmt: skip


def _quarters(rows: list[dict[str, int]], column: str) -> tuple[int, int]:
    quarter = max(1, len(rows) // 4)
    return max(r[column] for r in rows[:quarter]), max(r[column] for r in rows[-quarter:])


def memory_report(processes: ProcessSampler, heap: HeapSampler,
                  kinds: Sequence[str]) -> dict[str, Any]:  # fmt: skip
    """The per-minute table, first against last quarter, and the +10 % target per kind.

    Quarters are whole minutes (the largest figure of each minute), the heap's
    after-GC figure judged like the resident sizes.
    """
    rows = [{**rss, **jvm} for rss, jvm in zip(processes.per_minute(), heap.per_minute(),
                                                strict=False)]  # fmt: skip
    checks = {}
    for column in (*kinds, "heap_after_gc_max"):
        first, last = _quarters(rows, column)
        checks[column] = {"first_quarter_mb": first, "last_quarter_mb": last,
                          "ratio": round(last / first, 3) if first else None,
                          "ok": last <= first * 1.1}  # fmt: skip
    columns = (*kinds, "workers", "heap_committed", "heap_after_gc_min", "heap_after_gc_max")
    lines = ["| minute | " + " | ".join(columns) + " |", "|---" * (len(columns) + 1) + "|"]
    lines += [f"| {i} | " + " | ".join(f"{row[c]:,}" for c in columns) + " |"
              for i, row in enumerate(rows)]  # fmt: skip
    return {"per_minute": rows, "quarters": checks,
            "target_met": all(c["ok"] for c in checks.values()), "table": "\n".join(lines)}  # fmt: skip
