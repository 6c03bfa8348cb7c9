"""Soak: a pipeline runs for many minutes at a steady input rate; memory per process kind.

``--pipeline grouping``: the continuous medallion pipeline (``dkg run --continuous``:
bronze and silver queries side by side, gold refreshed every few
seconds) reads a ZIPF topic that a producer process fills at ``--rate`` msg/s.
``--pipeline join``: the join's streaming query reads two topics that a producer
process fills with generated join records at ``--rate`` msg/s (both topics
together), one minute of records generated at a time.

Every second the resident memory of each process kind is sampled (driver = this
process, the Spark JVM, Spark's Python workers, the broker; the producer apart),
and every five seconds the JVM heap: used, committed, and used after the last
garbage collection (the live data plus what that collection left). Printed: the
largest figure of each minute, the first against the last quarter of the run,
and the target: last-quarter memory at most the first quarter's + 10 % for every
process kind.

The local broker (noida-db) keeps every message in memory and has no time-based
retention, so the soak deletes what is older than ``--retention-s`` seconds
(Kafka's DeleteRecords) as ``retention.ms`` would on a real broker: the
pipelines never need it again (bronze has landed it, the join has checkpointed it).

A soak stops early once the pipeline is more than ``--max-lag-s`` seconds of
input behind, three minutes or more into the run (the report says so): the backlog then only grows, and this
broker answers every fetch with all of it, so memory would grow with it.

Usage: ``PYTHONPATH=. python -m bench.soak --pipeline grouping|join [--minutes 15] [--rate 40000]``
"""

from __future__ import annotations

import argparse
import multiprocessing
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.console import configure_logging, publish
from bench.procfs import ProcessSampler
from bench.soak_parts import HeapSampler, Retention, memory_report, produce_join, produce_zipf
from core.config import RunConfig, load_settings
from core.kafka.admin import end_offsets, ensure_topic
from core.kafka.broker import LocalBroker
from core.kafka.client import KafkaClient
from core.kafka.source import KafkaTopic
from core.run_plan import RunPlan
from core.spark.session import build_spark, local_driver_java_options
from core.tables import DeltaRsBackend
from core.warehouse import Warehouse
from pipelines.continuous import GoldRefresh, run_continuous
from pipelines.join_pipeline import JoinRequest, start_join
from pipelines.pipeline_runtime import WORKER_DAEMON
from silver.join.engine import JoinParams

__all__ = ["main"]

_PARTITIONS = 4
_GRACE_S = 180.0  # start-up (Python workers, the first batches) builds a backlog of its own


def _grouping(spark: Any, kafka: KafkaClient, warehouse: Warehouse, done: Callable[[], bool],
              args: argparse.Namespace) -> dict[str, Any]:  # fmt: skip
    refreshes: list[GoldRefresh] = []
    spec = RunPlan(run_id="soak", source_type="ZIPF", grouping=args.grouping,
                   splitters=_PARTITIONS, run=RunConfig(workers=10))  # fmt: skip
    source = KafkaTopic(kafka, "soak", "earliest", args.max_offsets)
    run_continuous(spark, source, spec, warehouse, DeltaRsBackend(),
                   done, trigger_s=args.trigger,
                   gold_every_s=args.gold_every, on_refresh=refreshes.append)  # fmt: skip
    return {"gold_refreshes": len(refreshes),
            "tuples_in_gold": refreshes[-1].tuples if refreshes else 0}  # fmt: skip


def _join(spark: Any, kafka: KafkaClient, warehouse: Warehouse, done: Callable[[], bool],
          args: argparse.Namespace) -> dict[str, Any]:  # fmt: skip
    request = JoinRequest(None, ("soak-left", "soak-right"), kafka,
                          JoinParams(partitions=(_PARTITIONS, _PARTITIONS)),
                          max_offsets_per_trigger=args.max_offsets)  # fmt: skip
    query = start_join(spark, request, warehouse, DeltaRsBackend(), trigger_s=args.trigger)
    rows: dict[int, int] = {}
    try:
        while not done():
            query.awaitTermination(5)
            if query.exception() is not None:
                raise RuntimeError(f"the join query failed: {query.exception()}")
            for progress in query.recentProgress:
                rows[progress["batchId"]] = progress["numInputRows"]
    finally:
        query.stop()
    return {"join_batches": len(rows), "join_input_rows": sum(rows.values())}


def main() -> None:
    """Run one soak and print (and save) one JSON document, the tables included."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pipeline", choices=("grouping", "join"), required=True)
    parser.add_argument("--minutes", type=float, default=15.0)
    parser.add_argument("--rate", type=int, default=40_000, help="messages/s into Kafka")
    parser.add_argument("--grouping", default="DYNAMIC_KEY")
    parser.add_argument("--max-offsets", type=int, default=200_000, help="per micro-batch")
    parser.add_argument("--trigger", type=float,
                        help="seconds per trigger (default: the run.trigger_interval_s setting)")
    parser.add_argument("--gold-every", type=float, default=2.0, help="grouping: seconds")
    parser.add_argument("--retention-s", type=float, default=120.0)
    parser.add_argument(
        "--max-lag-s",
        type=float,
        default=60.0,
        help="stop once the unread backlog is this many seconds of input",
    )
    parser.add_argument("--jvm-options", default="", help="added to the local JVM's options")
    parser.add_argument("--output", type=Path)
    args = parser.parse_args()
    configure_logging()
    settings = load_settings(env={}).settings
    args.trigger = args.trigger or settings.run.trigger_interval_s
    root = Path(tempfile.mkdtemp(prefix=f"dkg-soak-{args.pipeline}-"))
    topics = ("soak",) if args.pipeline == "grouping" else ("soak-left", "soak-right")
    with LocalBroker(root / "kafka") as broker:
        kafka = KafkaClient.from_config(settings.kafka, broker.start())
        for topic in topics:
            ensure_topic(kafka, topic, _PARTITIONS)
        options = local_driver_java_options(args.jvm_options)
        spark = build_spark(python_daemon=WORKER_DAEMON, app_name=f"dkg-soak-{args.pipeline}", master="local[2]",
                            extra_conf={"spark.driver.extraJavaOptions": options})  # fmt: skip
        spawn = multiprocessing.get_context("spawn")
        target = produce_zipf if args.pipeline == "grouping" else produce_join
        producer = spawn.Process(target=target, daemon=True,
                                 args=(kafka, topics, args.rate, args.minutes * 60))  # fmt: skip
        stop = threading.Event()
        retention = Retention(spark, kafka, topics, _PARTITIONS, args.retention_s, stop)
        heap = HeapSampler(spark, stop)
        started = time.monotonic()
        producer.start()
        processes = ProcessSampler(exclude={producer.pid}, named={broker.status().pid: "broker"})
        for thread in (processes, retention, heap):
            thread.start()
        run = _grouping if args.pipeline == "grouping" else _join
        deadline, most = started + args.minutes * 60, args.rate * args.max_lag_s

        def done() -> bool:
            # A backlog only grows once the pipeline falls behind, and with this broker
            # every fetch returns all of it: stop before it fills the machine's memory.
            now = time.monotonic()
            return now >= deadline or (now - started > _GRACE_S and retention.lag > most)

        try:
            figures = run(spark, kafka, Warehouse(root / "lake"), done, args)
            seconds = time.monotonic() - started
            produced = sum(sum(end_offsets(kafka, t).values()) for t in topics)
        finally:
            stop.set()
            processes.stop()
            producer.terminate()
            producer.join(timeout=60)
            spark.stop()
        figures["retention_deleted_up_to"] = retention.deleted_up_to
        figures["stopped_behind_by"] = retention.lag if retention.lag > most else None
    report = {"pipeline": args.pipeline, "target_rate": args.rate, "seconds": round(seconds),
              "produced": produced, "produced_msg_per_s": round(produced / seconds), **figures,
              **memory_report(processes, heap, ("driver", "jvm", "python_workers", "broker"))}  # fmt: skip
    publish(report, args.output or Path(f"bench/results/soak_{args.pipeline}.json"))
    print(report["table"])


if __name__ == "__main__":
    main()
