"""Kafka -> bronze -> silver -> gold: sustained throughput, end-to-end latency, where time goes.

Two measurements on local brokers and one Spark session:

- ``drain``: the topic holds N messages; the job drains it to gold. Throughput
  is N over the job's wall time, set against a baseline measured in the same
  run: one process reading the same topic with librdkafka and doing nothing else
  (the ingest ceiling of this machine).
- ``live``: once every stage runs continuously (``--cold``: before they start),
  a producer writes N messages at ``--rate`` messages/s, stamped with the
  wall-clock time they were sent. A message's latency is the end of the first
  gold refresh that covers its offset minus its send time, split into where it
  waited (:mod:`bench.latency_breakdown`). It has a broker of its own, which
  deletes what the queries have read once it is ``--broker-retention-s`` old:
  the embedded broker rewrites everything it holds as JSON about once a second
  while anything changes, so its CPU, taken from the pipeline's two cores, grows
  with what it holds (producing 3 M messages at 50,000/s cost it 46 CPU-seconds
  keeping all, against 17 with this retention); a Kafka broker appends to a log.
- ``--peers`` (with the drain): after the other measurements, a quix-streams
  application and the plain Spark job (``groupBy(window, key).count()`` into
  Delta) count the drain's topic per key and 60 s window; every result, gold's
  too, is checked against the generator's own counts (:mod:`bench.peers`).

Usage: ``python -m bench.pipeline_bench [--messages 1000000] [--rate 60000] [--mode both] [--peers]``
"""

from __future__ import annotations

import argparse
import logging
import multiprocessing
import os
import shutil
import tempfile
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from bench.console import configure_logging, publish
from bench.driver_io import counting_driver_bytes
from bench.latency_breakdown import latency_breakdown, refreshed_windows_versions, routed_versions
from bench.micro_batches import event_log_conf, micro_batch_parts
from bench.peers.quix import peers_python
from bench.peers.run import run_peers
from bench.procfs import ProcessSampler, wait_until_idle
from bench.soak_parts import Retention
from bronze.datasets.base import Dataset, DatasetSpec
from bronze.datasets.registry import make_dataset
from bronze.producer import produce
from bronze.schemas import RAW_EVENTS
from core.config import RunConfig, Settings, load_settings
from core.kafka.admin import end_offsets, ensure_topic, topic_exists
from core.kafka.broker import LocalBroker
from core.kafka.client import KafkaClient
from core.kafka.source import KafkaTopic
from core.profiling import phase_totals
from core.run_plan import RunPlan
from core.spark.python_workers import start_python_workers
from core.spark.session import build_spark
from core.stages import RunContext
from core.tables import DeltaRsBackend
from core.warehouse import Warehouse
from pipelines.continuous import GoldRefresh, run_continuous
from pipelines.medallion import StageTimes, run_finite, stages
from pipelines.pipeline_runtime import WORKER_DAEMON
from silver.schemas import ROUTED_TABLE

logger = logging.getLogger("bench.pipeline")


_DRAIN_TOPIC = "bench-drain"  # also the drain's run id
_LIVE_RETENTION_EVERY_S = 2.0


def _drain_source(kafka: KafkaClient, args: argparse.Namespace) -> KafkaTopic:
    return KafkaTopic(kafka, _DRAIN_TOPIC, "earliest", args.max_offsets)


def _consume_baseline(kafka: KafkaClient, topic: str, total: int) -> float:
    """Messages/s of one librdkafka consumer reading the whole topic, doing nothing else."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer(kafka.consumer_settings(**{"group.id": "bench", "log_level": 3,
                                                   "enable.auto.commit": False}))  # fmt: skip
    partitions = end_offsets(kafka, topic)
    consumer.assign([TopicPartition(topic, p, 0) for p in partitions])
    started, seen = time.monotonic(), 0
    while seen < total:
        seen += len(consumer.consume(num_messages=min(50_000, total - seen), timeout=1.0))
    consumer.close()
    return total / (time.monotonic() - started)


def _spec(run_id: str, workers: int, splitters: int, grouping: str, dataset: str = "ZIPF",
          run: RunConfig | None = None) -> RunPlan:  # fmt: skip
    return RunPlan(run_id=run_id, source_type=dataset, grouping=grouping,
                   splitters=splitters, run=run or RunConfig(workers=workers))  # fmt: skip


def _profile(times: StageTimes) -> dict[str, Any]:
    return {"seconds": {k: round(v, 2) for k, v in times.seconds.items()},
            "spark_ms": times.profile}  # fmt: skip


def drain(spark: Any, kafka: KafkaClient, broker_pid: int, warehouse: Warehouse,
          args: argparse.Namespace, dataset: Dataset,
          topic: str = _DRAIN_TOPIC) -> dict[str, Any]:  # fmt: skip
    """Produce ``dataset`` into ``topic`` (also the run id), let the broker settle, then time
    the job from Kafka to gold."""
    started = time.monotonic()
    messages = produce(dataset, kafka, topic, args.partitions)
    produce_rate = messages / (time.monotonic() - started)
    settled = wait_until_idle(broker_pid)
    baseline = _consume_baseline(kafka, topic, messages)
    settled += wait_until_idle(broker_pid)
    source = KafkaTopic(kafka, topic, "earliest", args.max_offsets)
    started = time.monotonic()
    cpu = _CpuMeter()
    processes = ProcessSampler(named={broker_pid: "broker"})
    processes.start()
    with counting_driver_bytes() as received:
        times = run_finite(spark, source, _spec(topic, args.workers, args.partitions,
                                               args.grouping), warehouse, DeltaRsBackend(),
                           after_stage=cpu.mark)  # fmt: skip
    seconds = time.monotonic() - started
    processes.stop()
    rate = messages / seconds
    return {"messages": messages, "seconds": round(seconds, 1), "msg_per_s": round(rate),
            "baseline_consume_msg_per_s": round(baseline), "vs_baseline": round(rate / baseline, 3),
            "producer_msg_per_s": round(produce_rate), "broker_settle_s": round(settled, 1),
            "machine_cpu_s": cpu.seconds, "cpu_s": processes.cpu_by_kind(),
            "read_mb": processes.read_mb_by_kind(), "peak_rss_mb": processes.peak_rss_mb(),
            "driver_received_mb": received.megabytes(), **_profile(times)}  # fmt: skip


class _CpuMeter:
    """Busy CPU seconds of the whole machine (all processes: JVM, Python workers, driver) per layer.

    The drain runs alone on the machine, so this is what each layer costs in CPU;
    two cores give at most twice the wall time. A query that writes two layers
    (silver's, landing bronze) shows under the first of them, the other at 0.
    """

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self._last = self._busy()

    @staticmethod
    def _busy() -> float:
        try:
            fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
        except OSError:  # not Linux: no figures
            return 0.0
        user, nice, system, _idle, _iowait, irq, softirq, steal = map(int, fields[:8])
        return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")

    def mark(self, layer: str) -> None:
        now = self._busy()
        self.seconds[layer] = round(now - self._last, 1)
        self._last = now


def _reached_gold(warehouse: Warehouse, run_id: str, refreshes: list[GoldRefresh]
                  ) -> list[tuple[dict[int, int], float]]:  # fmt: skip
    """Per gold refresh: the highest offset per partition it covered, and when it finished."""
    from deltalake import DeltaTable

    path = str(warehouse.table_uri(*ROUTED_TABLE))
    windows = [r.windows_version for r in refreshes if r.windows_version is not None]
    routed = dict(zip(windows, routed_versions(warehouse, run_id, windows), strict=True))
    covered: dict[int, dict[int, int]] = {-1: {}}
    result = []
    for refresh in refreshes:
        if refresh.windows_version is None:
            continue
        version = routed[refresh.windows_version]
        if version not in covered:
            rows = DeltaTable(path, version=version).to_pyarrow_table(columns=["run_id", "partition", "offset"])
            rows = rows.filter(pc.equal(rows["run_id"], run_id))
            maxima = rows.group_by("partition").aggregate([("offset", "max")]).to_pylist()
            covered[version] = {int(r["partition"]): int(r["offset_max"]) for r in maxima}
        result.append((covered[version], refresh.finished_at))
    return result


def _bronze_messages(warehouse: Warehouse,
                     run_id: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # fmt: skip
    """Each bronze message's partition, offset and send time (epoch ms)."""
    bronze = DeltaRsBackend().read(warehouse.table_uri(*RAW_EVENTS))
    bronze = bronze.filter(pc.equal(bronze["run_id"], run_id))
    sent_ms = pc.cast(bronze["timestamp"], pa.int64()).to_numpy() // 1_000  # microseconds
    return bronze["partition"].to_numpy(), bronze["offset"].to_numpy(), sent_ms


def _latencies(partition: np.ndarray, offset: np.ndarray, sent_ms: np.ndarray,
               reached: list[tuple[dict[int, int], float]]) -> np.ndarray:  # fmt: skip
    """Each message's produce-to-gold latency (ms)."""
    # The run stops once gold holds every message: what no refresh's recorded
    # silver version covers (it is read just before the refresh) is in the last one.
    done_ms = np.array([finished for _, finished in reached] + [reached[-1][1]]) * 1000.0
    latency = np.full(len(offset), np.nan)
    for p in np.unique(partition):
        rows = partition == p
        highest = np.array([offsets.get(int(p), -1) for offsets, _ in reached])
        highest = np.maximum.accumulate(highest)  # gold only grows
        first = np.searchsorted(highest, offset[rows], side="left")
        latency[rows] = done_ms[first] - sent_ms[rows]
    return latency


def _gold_rate(reached: list[tuple[dict[int, int], float]], produced_until_s: float) -> int | None:
    """Messages per second that reached gold between the first and the last refresh made
    while the producer was still writing: whether the pipeline keeps pace with it."""
    during = [(sum(o + 1 for o in offsets.values()), at) for offsets, at in reached
              if offsets and at <= produced_until_s]  # fmt: skip
    if len(during) < 2 or during[-1][1] <= during[0][1]:
        return None
    return round((during[-1][0] - during[0][0]) / (during[-1][1] - during[0][1]))


def _produce_live(kafka: KafkaClient, topic: str, partitions: int, messages: int, start_ms: int,
                  speed: float, ready: Any, go: Any, dataset: str) -> None:
    """The live producer, in a process of its own: renders every message, then sends on ``go``.

    The messages come from outside in a real deployment; rendering or sending them
    in the driver would count their CPU as the pipeline's.
    """
    spec = DatasetSpec(name=dataset, messages=messages, start_ms=start_ms)
    batches = list(make_dataset(spec).messages(batch_size=10_000))

    class _Rendered:
        def messages(self, batch_size: int) -> Any:
            return iter(batches)

    ready.set()
    go.wait()
    produce(_Rendered(), kafka, topic, partitions, speed, None, 10_000, True)  # type: ignore[arg-type]


def _send_once_running(spark: Any, go: Any, sent_from: list[float], queries: int) -> None:
    """Let the live producer go once every query of the run is running.

    A live pipeline is up before its messages arrive; starting it after them
    would charge the queries' start-up (seconds of planner processes and Python
    workers) to the first messages' latency.
    """
    deadline = time.monotonic() + 300
    while len(spark.streams.active) < queries and time.monotonic() < deadline:
        time.sleep(0.2)
    sent_from.append(time.time())
    go.set()


def live(spark: Any, kafka: KafkaClient, broker_pid: int, warehouse: Warehouse,
         args: argparse.Namespace, topic: str = "bench-live", dataset: str = "ZIPF",
         run: RunConfig | None = None) -> dict[str, Any]:  # fmt: skip
    """Produce ``dataset`` into ``topic`` (also the run id) at a fixed rate while every stage
    runs continuously with ``run`` (default: W workers, the model only); latency per message."""
    run_id = topic
    start_ms = time.time_ns() // 1_000_000
    speed = args.rate / DatasetSpec(name=dataset, messages=1).rate  # event time vs the wall clock
    spawn = multiprocessing.get_context("spawn")
    ready, go = spawn.Event(), spawn.Event()
    producer = spawn.Process(target=_produce_live, daemon=True, args=(
        kafka, topic, args.partitions, args.messages, start_ms, speed, ready, go, dataset))  # fmt: skip
    producer.start()
    ready.wait()
    source, backend = KafkaTopic(kafka, topic, "earliest", args.max_offsets), DeltaRsBackend()
    spec = _spec(run_id, args.workers, args.partitions, args.grouping, dataset, run)
    sent_from: list[float] = []  # when the producer was let go
    if args.cold:  # the producer first: the queries' start-up counts in the latencies
        sent_from.append(time.time())
        go.set()
        while not topic_exists(kafka, topic):
            time.sleep(0.1)
    else:
        ensure_topic(kafka, topic, args.partitions)
        queries = len(stages(RunContext(spark, source, spec, warehouse, backend)))
        threading.Thread(target=_send_once_running, args=(spark, go, sent_from, queries),
                         daemon=True).start()  # fmt: skip
    refreshes: list[GoldRefresh] = []
    processes = ProcessSampler(named={broker_pid: "broker", producer.pid: "producer"})
    processes.start()
    stop_retention = threading.Event()
    if args.broker_retention_s:
        Retention(spark, kafka, [topic], args.partitions, args.broker_retention_s, stop_retention,
                  every_s=_LIVE_RETENTION_EVERY_S).start()  # fmt: skip
    with counting_driver_bytes() as received:
        times = run_continuous(
            spark, source, spec, warehouse, backend, lambda: bool(refreshes) and refreshes[-1].tuples >= args.messages,
            trigger_s=args.trigger, gold_every_s=args.gold_every, on_refresh=refreshes.append,
        )  # fmt: skip
    stop_retention.set()
    processes.stop()
    producer.join()
    seconds = refreshes[-1].finished_at - sent_from[0]
    covered = refreshed_windows_versions(warehouse, run_id)
    if len(covered) == len(refreshes):  # each refresh's coverage as gold recorded it
        refreshes = [replace(r, windows_version=v) for r, v in zip(refreshes, covered, strict=True)]
    else:
        logger.warning("%d gold commits for %d refreshes: coverage from the versions seen before each refresh",
                       len(covered), len(refreshes))  # fmt: skip
    reached = _reached_gold(warehouse, run_id, refreshes)
    partition, offset, sent_ms = _bronze_messages(warehouse, run_id)
    breakdown = latency_breakdown(warehouse, run_id, partition, offset, sent_ms / 1000.0,
                                  refreshes)  # fmt: skip
    order = np.argsort(sent_ms, kind="stable")
    sent, latency = sent_ms[order], _latencies(partition, offset, sent_ms, reached)[order]
    quarter = len(latency) // 4

    def percentiles(values: np.ndarray) -> dict[str, int]:
        return {f"p{q}": round(float(np.nanpercentile(values, q))) for q in (50, 99)}

    return {"messages": args.messages, "target_rate": args.rate, "gold_refreshes": len(refreshes),
            "seconds": round(seconds, 1), "sustained_msg_per_s": round(args.messages / seconds),
            "cpu_s": processes.cpu_by_kind(), "read_mb": processes.read_mb_by_kind(),
            "driver_received_mb": received.megabytes(),
            # The foreachBatch functions' phases, all queries together (they run side by side).
            "driver_phases_s": {k: round(v, 1) for k, v in phase_totals().items()},
            "produce_span_s": round(float(sent[-1] - sent[0]) / 1000, 1),
            "gold_msg_per_s_while_producing": _gold_rate(reached, float(sent[-1]) / 1000),
            "latency_ms": {**percentiles(latency), "max": round(float(np.nanmax(latency))),
                           "first_quarter": percentiles(latency[:quarter]),
                           "last_quarter": percentiles(latency[-quarter:])},
            "latency_breakdown": breakdown, **_profile(times)}  # fmt: skip


def main() -> None:
    """Run the measurements and print (and save) one JSON document."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--rate", type=int, default=60_000, help="live producer rate, msg/s")
    parser.add_argument("--workers", type=int, default=10)
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--grouping", default="DYNAMIC_KEY")
    parser.add_argument("--max-offsets", type=int,
                        help="Kafka messages per micro-batch (default: the run.bronze_max_offsets_per_trigger setting)")
    parser.add_argument("--mode", choices=("drain", "live", "both"), default="both")
    parser.add_argument("--trigger", type=float,
                        help="live: seconds per trigger (default: the run.trigger_interval_s setting)")
    parser.add_argument("--cold", action="store_true",
                        help="live: start the producer before the queries (their start-up counts)")  # fmt: skip
    parser.add_argument("--gold-every", type=float, default=2.0, help="live: longest pause between gold refreshes")
    parser.add_argument("--broker-retention-s", type=float, default=5.0,
                        help="live: delete from the embedded broker what the queries have read "
                             "once it is this old (0: keep all); it rewrites all it holds as JSON "
                             "every second, so its CPU grows with the topic, a Kafka broker's does not")
    parser.add_argument("--stage-times", action="store_true",
                        help="write Spark's event log and split the median silver micro-batch "
                             "into its parts: planning, logs, each stage's tasks (bench.micro_batches)")
    parser.add_argument("--peers", action="store_true",
                        help="also time quix-streams and a plain Spark job on the drain's topic")  # fmt: skip
    parser.add_argument("--output", type=Path, default=Path("bench/results/pipeline.json"))
    parser.add_argument("--keep", action="store_true",
                        help="keep the brokers' data and the warehouses (about 1 GB per million "
                             "messages) in the folder logged at the end, for bench.gold_refresh_bench")  # fmt: skip
    args = parser.parse_args()
    if args.peers and args.mode == "live":
        parser.error("--peers compares the drain: use --mode drain or both")
    configure_logging()
    settings = load_settings(env={}).settings
    args.trigger = args.trigger or settings.run.trigger_interval_s
    args.max_offsets = args.max_offsets or settings.run.bronze_max_offsets_per_trigger
    quix_python = peers_python() if args.peers else ""
    spec = DatasetSpec(name="ZIPF", messages=args.messages, start_ms=time.time_ns() // 1_000_000)
    root = Path(tempfile.mkdtemp(prefix="dkg-bench-"))
    try:
        results = _measure(args, spec, settings, quix_python, root)
    finally:
        if args.keep:
            logger.info("brokers' data and warehouses kept in %s", root)
        else:
            shutil.rmtree(root, ignore_errors=True)
    publish(results, args.output)


def _measure(args: argparse.Namespace, spec: DatasetSpec, settings: Settings, quix_python: str,
             root: Path) -> dict[str, Any]:  # fmt: skip
    results: dict[str, Any] = {}
    with LocalBroker(root / "kafka") as broker:
        # The embedded broker with the local profile's client settings, as `dkg run` has them.
        kafka = KafkaClient.from_config(settings.kafka, broker.start())
        event_log = root / "event-log"
        spark = build_spark(python_daemon=WORKER_DAEMON, app_name="dkg-bench", master="local[2]",
                            extra_conf=event_log_conf(event_log) if args.stage_times else None)  # fmt: skip
        # Timed systems all find Python workers up: the Spark peer, timed after the
        # drain in this session, would otherwise skip the start the drain paid.
        start_python_workers(spark)
        broker_pid = broker.status().pid
        if args.mode in ("drain", "both"):
            results["drain"] = drain(spark, kafka, broker_pid, Warehouse(root / "drain"), args,
                                     make_dataset(spec))  # fmt: skip
        if args.mode in ("live", "both"):
            # A broker of its own: the embedded one rewrites all it holds while anything
            # changes, so the drain's messages would cost the live run CPU Kafka would not.
            with LocalBroker(root / "kafka-live") as live_broker:
                live_kafka = KafkaClient.from_config(settings.kafka, live_broker.start())
                results["live"] = live(spark, live_kafka, live_broker.status().pid,
                                       Warehouse(root / "live"), args)  # fmt: skip
        if args.peers:  # on the drain's broker and topic
            results["peers"] = run_peers(spark, kafka, broker_pid, _drain_source(kafka, args),
                                         spec, results["drain"], Warehouse(root / "drain"),
                                         _DRAIN_TOPIC, quix_python, root / "peers")  # fmt: skip
        spark.stop()
    if args.stage_times:  # the silver queries started in the order the measurements ran
        measured = [mode for mode in ("drain", "live") if mode in results]
        for mode, parts in zip(measured, micro_batch_parts(event_log, "silver"), strict=True):
            results[mode]["micro_batches"] = parts
    return results


if __name__ == "__main__":
    main()
