"""Kafka -> bronze -> silver -> gold: sustained throughput, end-to-end latency, where time goes.

Two measurements on one local broker and one Spark session:

- ``drain``: the topic holds N messages; the job drains it to gold. Throughput
  is N over the job's wall time, set against a baseline measured in the same
  run: one process reading the same topic with librdkafka and doing nothing else
  (the ingest ceiling of this machine).
- ``live``: a producer writes N messages at ``--rate`` messages/s, stamped with
  the wall-clock time they were sent, while the job runs round after round
  (each round drains every stage and refreshes gold). A message's latency is
  the end of the first round whose frozen Kafka end offsets include it minus
  its send time: an upper bound on produce-to-gold latency.

Usage: ``python bench/pipeline_bench.py [--messages 1000000] [--rate 60000] [--mode both]``
"""

from __future__ import annotations

import argparse
import json
import logging
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from bronze.datasets.base import DatasetSpec
from bronze.datasets.registry import make_dataset
from bronze.producer import produce
from pipelines.core.broker import LocalBroker, end_offsets, topic_exists
from pipelines.core.kafka_source import read_kafka_stream
from pipelines.core.paths import Warehouse
from pipelines.core.spark import build_spark
from pipelines.core.tables import DeltaRsBackend
from pipelines.jobs import RunSpec, StageTimes, run_finite

logger = logging.getLogger("bench.pipeline")


def _consume_baseline(bootstrap: str, topic: str, total: int) -> float:
    """Messages/s of one librdkafka consumer reading the whole topic, doing nothing else."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "bench",
                         "enable.auto.commit": False, "log_level": 3})  # fmt: skip
    partitions = end_offsets(bootstrap, topic)
    consumer.assign([TopicPartition(topic, p, 0) for p in partitions])
    started, seen = time.monotonic(), 0
    while seen < total:
        seen += len(consumer.consume(num_messages=50_000, timeout=1.0))
    consumer.close()
    return total / (time.monotonic() - started)


def _spec(run_id: str, workers: int, splitters: int, grouping: str) -> RunSpec:
    return RunSpec(run_id=run_id, source_type="ZIPF", grouping=grouping, workers=workers,
                   splitters=splitters)  # fmt: skip


def _profile(times: StageTimes) -> dict[str, Any]:
    return {"seconds": {k: round(v, 2) for k, v in times.seconds.items()},
            "spark_ms": times.profile}  # fmt: skip


def drain(spark: Any, bootstrap: str, warehouse: Warehouse, args: argparse.Namespace) -> dict[str, Any]:
    """Produce N messages, then time the job from Kafka to gold."""
    topic = "bench-drain"
    spec = DatasetSpec(name="ZIPF", messages=args.messages, start_ms=time.time_ns() // 1_000_000)
    started = time.monotonic()
    produce(make_dataset(spec), bootstrap, topic, args.partitions)
    produce_rate = args.messages / (time.monotonic() - started)
    baseline = _consume_baseline(bootstrap, topic, args.messages)
    kafka_rows = read_kafka_stream(spark, bootstrap, topic, "earliest", args.max_offsets)
    started = time.monotonic()
    times = run_finite(spark, kafka_rows, _spec("bench-drain", args.workers, args.partitions,
                                                args.grouping), warehouse, DeltaRsBackend())  # fmt: skip
    seconds = time.monotonic() - started
    rate = args.messages / seconds
    return {"messages": args.messages, "seconds": round(seconds, 1), "msg_per_s": round(rate),
            "baseline_consume_msg_per_s": round(baseline), "vs_baseline": round(rate / baseline, 3),
            "producer_msg_per_s": round(produce_rate), **_profile(times)}  # fmt: skip


def _latencies(warehouse: Warehouse, run_id: str, rounds: list[tuple[dict[int, int], float]]
               ) -> np.ndarray:  # fmt: skip
    bronze = DeltaRsBackend().read(warehouse.table_path("bronze", "raw_events"))
    bronze = bronze.filter(pc.equal(bronze["run_id"], run_id))
    sent_ms = pc.cast(bronze["timestamp"], pa.int64()).to_numpy() // 1_000  # microseconds
    bronze = bronze.select(["partition", "offset"]).to_pandas()
    done_ms = np.array([finished for _, finished in rounds]) * 1000.0
    latency = np.empty(len(bronze))
    for partition, rows in bronze.groupby("partition").indices.items():
        ends = np.array([offsets.get(int(partition), 0) for offsets, _ in rounds])
        first_round = np.searchsorted(ends, bronze["offset"].to_numpy()[rows], side="right")
        latency[rows] = done_ms[first_round] - sent_ms[rows]
    return latency


def live(spark: Any, bootstrap: str, warehouse: Warehouse, args: argparse.Namespace) -> dict[str, Any]:
    """Produce at a fixed rate while the job runs in rounds; latency per message."""
    topic, run_id = "bench-live", "bench-live"
    spec = DatasetSpec(name="ZIPF", messages=args.messages, start_ms=time.time_ns() // 1_000_000)
    speed = args.rate / spec.rate  # event time runs this much faster than the wall clock
    producer = threading.Thread(target=produce, daemon=True, args=(
        make_dataset(spec), bootstrap, topic, args.partitions, speed, None, 10_000, True))  # fmt: skip
    started = time.monotonic()
    producer.start()
    while not topic_exists(bootstrap, topic):
        time.sleep(0.1)
    rounds: list[tuple[dict[int, int], float]] = []
    times = StageTimes()
    while True:
        frozen = end_offsets(bootstrap, topic)
        kafka_rows = read_kafka_stream(spark, bootstrap, topic, "earliest", args.max_offsets)
        round_times = run_finite(spark, kafka_rows, _spec(run_id, args.workers, args.partitions,
                                                          args.grouping), warehouse, DeltaRsBackend())  # fmt: skip
        rounds.append((frozen, time.time()))
        for stage, seconds in round_times.seconds.items():
            times.seconds[stage] = times.seconds.get(stage, 0.0) + seconds
        for stage, phases in round_times.profile.items():
            for phase, value in phases.items():
                times.profile.setdefault(stage, {})[phase] = times.profile.get(stage, {}).get(phase, 0) + value
        logger.info("round %d: %d messages in gold", len(rounds), sum(frozen.values()))
        if not producer.is_alive() and sum(frozen.values()) >= args.messages:
            break
    seconds = time.monotonic() - started
    latency = _latencies(warehouse, run_id, rounds)
    return {"messages": args.messages, "target_rate": args.rate, "rounds": len(rounds),
            "seconds": round(seconds, 1), "sustained_msg_per_s": round(args.messages / seconds),
            "latency_ms": {"p50": round(float(np.percentile(latency, 50))),
                           "p99": round(float(np.percentile(latency, 99))),
                           "max": round(float(latency.max()))},
            **_profile(times)}  # fmt: skip


def main() -> None:
    """Run the measurements and print (and save) one JSON document."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--rate", type=int, default=60_000, help="live producer rate, msg/s")
    parser.add_argument("--workers", type=int, default=10)
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--grouping", default="DYNAMIC_KEY")
    parser.add_argument("--max-offsets", type=int, default=250_000, help="per bronze micro-batch")
    parser.add_argument("--mode", choices=("drain", "live", "both"), default="both")
    parser.add_argument("--output", type=Path, default=Path("bench/results/pipeline.json"))
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    for noisy in ("kafka", "py4j", "numba"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    root = Path(tempfile.mkdtemp(prefix="dkg-bench-"))
    results: dict[str, Any] = {}
    with LocalBroker(root / "kafka") as broker:
        bootstrap = broker.start()
        spark = build_spark(app_name="dkg-bench", master="local[2]")
        if args.mode in ("drain", "both"):
            results["drain"] = drain(spark, bootstrap, Warehouse(root / "drain"), args)
        if args.mode in ("live", "both"):
            results["live"] = live(spark, bootstrap, Warehouse(root / "live"), args)
        spark.stop()
    text = json.dumps(results, indent=2)
    print(text)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(text)


if __name__ == "__main__":
    main()
