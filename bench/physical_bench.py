"""Physical mode side by side: KEY against DYNAMIC_KEY when the workers really work.

With ``run.work=cpu`` each worker's Spark task spends ``process_ms`` of CPU per
tuple, so a hot key's worker is the critical path of every micro-batch. The
benchmark produces one dataset into the embedded broker, then drains it through
the pipeline once per grouping, in micro-batches of ``--max-offsets`` messages
(the same batches for both), and reports per grouping:

- the silver micro-batches' durations (Spark's ``triggerExecution``: read,
  route, serve, commit) and their sum;
- each worker's real busy CPU-seconds (``gold.worker_busy``) and the busiest
  worker's share of the tuples;
- end-to-end latency of the drain: a message's latency is the end of the
  micro-batch that committed it minus the drain's start (every message is in
  the topic when the drain starts: a backlog, the load at which a hot worker
  hurts most);
- with ``--rate R``, end-to-end latency live: a producer writes ``--live-messages``
  at R messages/s while the pipeline runs continuously, and a message's latency
  is the end of the first gold refresh that holds it minus the time it was sent
  (:func:`bench.pipeline_bench.live`), once per grouping. At a rate between the
  two groupings' capacities, KEY's hot worker falls behind and its latency grows
  for as long as the producer writes; DYNAMIC_KEY's stays flat.

Each grouping first drains a small topic once, unmeasured: the session's first
queries pay for starting Python workers and compiling routing loops (seconds).
Then the groupings run in turns (KEY, DYNAMIC_KEY, DYNAMIC_KEY, KEY, ... for
``--rounds``), each over a warehouse of its own, and each grouping's figures are
its median over the rounds, so a noisy neighbour weighs on both alike.

The ideal ratio is what the work alone would give: KEY's busiest worker's
tuples over DYNAMIC_KEY's (each worker on a core of its own). The measured
ratio is lower by the work every grouping does alike (reading Kafka, parsing,
routing, commits), which the busiest worker's work does not hide.

``--cluster`` runs it on a Spark standalone cluster of two one-core workers
started on this machine (:mod:`bench.standalone`), as the infrastructure test does.

Usage: ``python -m bench.physical_bench [--messages 400000] [--process-ms 0.05]
[--rounds 2] [--cluster | --master spark://HOST:PORT]``
"""

from __future__ import annotations

import argparse
import logging
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.compute as pc

from bench.console import configure_logging, publish
from bench.pipeline_bench import live
from bench.standalone import StandaloneCluster
from bronze.datasets.base import DatasetSpec
from bronze.datasets.registry import make_dataset
from bronze.producer import produce
from core.config import RunConfig, load_settings
from core.kafka.broker import LocalBroker
from core.kafka.client import KafkaClient
from core.kafka.source import KafkaTopic
from core.run_plan import RunPlan
from core.spark.session import build_spark
from core.tables import DeltaRsBackend
from core.warehouse import Warehouse
from gold.schemas import WORKER_BUSY
from pipelines.medallion import run_finite
from pipelines.pipeline_runtime import WORKER_DAEMON
from pipelines.planning import queue_speed

logger = logging.getLogger("bench.physical")

__all__ = ["main", "physical_run"]


def _percentile(values: list[float], q: float) -> float:
    return round(float(np.percentile(values, q)), 3) if values else 0.0


def physical_run(spark: Any, kafka: KafkaClient, topic: str, grouping: str, messages: int,
                 args: argparse.Namespace, root: Path) -> dict[str, Any]:  # fmt: skip
    """Drain ``topic`` through ``grouping`` in physical mode; its batches, busy time and latency."""
    run = RunConfig(workers=args.workers, process_ms=args.process_ms, work="cpu",
                    bronze_max_offsets_per_trigger=args.max_offsets)  # fmt: skip
    rate = make_dataset(DatasetSpec(name=args.dataset, messages=messages)).tuples_per_second()
    speed, load = queue_speed(run, rate)
    plan = RunPlan(run_id=f"physical-{root.name}", source_type=args.dataset,
                   grouping=grouping, splitters=args.partitions, run=run, speed=speed, load=load)  # fmt: skip
    warehouse, backend = Warehouse(root), DeltaRsBackend()
    source = KafkaTopic(kafka, topic, "earliest", args.max_offsets)
    started, began = time.monotonic(), time.time()
    times = run_finite(spark, source, plan, warehouse, backend)
    batches = times.batches["silver"]
    seconds = [ms / 1000 for _, _, ms, _ in batches]
    # A message's latency: its batch's end after the drain began (all were waiting then).
    ends = np.array([end - began for *_, end in batches])
    latency = np.repeat(ends, [rows for _, rows, _, _ in batches])
    busy = backend.read(warehouse.table_uri(*WORKER_BUSY))
    per_worker = busy.group_by("worker").aggregate([("busy_s", "sum"), ("tuples", "sum")])
    tuples = dict(zip(per_worker["worker"].to_pylist(), per_worker["tuples_sum"].to_pylist(),
                      strict=True))  # fmt: skip
    busy_s = dict(zip(per_worker["worker"].to_pylist(), per_worker["busy_s_sum"].to_pylist(),
                      strict=True))  # fmt: skip
    critical = busy.group_by("batch_id").aggregate([("busy_s", "max")])
    return {
        "grouping": grouping, "batches": len(batches),
        "batch_s": {"p50": _percentile(seconds, 50), "p90": _percentile(seconds, 90),
                    "sum": round(sum(seconds), 2)},
        "busiest_share": round(max(tuples.values()) / sum(tuples.values()), 4),
        "busy_s_per_worker": {w: round(s, 2) for w, s in sorted(busy_s.items())},
        "critical_path_busy_s": round(float(pc.sum(critical["busy_s_max"]).as_py()), 2),
        "drain_latency_s": {"p50": _percentile(list(latency), 50),
                            "p99": _percentile(list(latency), 99)},
        "wall_s": round(time.monotonic() - started, 1),
        "silver_phases_ms": times.profile["silver"],
    }  # fmt: skip


def _table(results: list[dict[str, Any]]) -> str:
    head = (f"{'grouping':<12} {'batches':>7} {'batch p50':>9} {'batch p90':>9} {'batches sum':>11} "
            f"{'busiest share':>13} {'busy s per worker':>20} {'latency p50/p99':>16}")  # fmt: skip
    lines = [head, "-" * len(head)]
    for r in results:
        per_worker = "/".join(f"{s:.1f}" for s in r["busy_s_per_worker"].values())
        lines.append(f"{r['grouping']:<12} {r['batches']:>7} {r['batch_s']['p50']:>8.2f}s "
                     f"{r['batch_s']['p90']:>8.2f}s {r['batch_s']['sum']:>10.2f}s "
                     f"{r['busiest_share']:>13.3f} {per_worker:>20} "
                     f"{r['drain_latency_s']['p50']:>6.1f}/{r['drain_latency_s']['p99']:.1f} s")  # fmt: skip
    return "\n".join(lines)


def _live(spark: Any, kafka: KafkaClient, broker_pid: int, grouping: str, args: argparse.Namespace,
          root: Path, trigger_s: float) -> dict[str, Any]:  # fmt: skip
    """Produce at ``--rate`` while the pipeline runs continuously in physical mode."""
    run = RunConfig(workers=args.workers, process_ms=args.process_ms, work="cpu",
                    bronze_max_offsets_per_trigger=args.max_offsets)  # fmt: skip
    live_args = argparse.Namespace(rate=args.rate, partitions=args.partitions,
                                   messages=args.live_messages, max_offsets=args.max_offsets,
                                   workers=args.workers, grouping=grouping, cold=False,
                                   trigger=trigger_s, gold_every=2.0)  # fmt: skip
    name = f"live-{grouping.lower()}"
    result = live(spark, kafka, broker_pid, Warehouse(root / name), live_args, topic=name,
                  dataset=args.dataset, run=run)  # fmt: skip
    return {"grouping": grouping, "latency_ms": result["latency_ms"],
            "sustained_msg_per_s": result["sustained_msg_per_s"],
            "gold_msg_per_s_while_producing": result["gold_msg_per_s_while_producing"]}  # fmt: skip


def _median_run(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The round whose batches' sum is the median (the lower of two)."""
    ordered = sorted(runs, key=lambda r: r["batch_s"]["sum"])
    return {**ordered[(len(ordered) - 1) // 2], "rounds_batch_sum_s": [r["batch_s"]["sum"] for r in runs]}


def _compare(args: argparse.Namespace, master: str, root: Path, settings: Any) -> dict[str, Any]:
    spec = DatasetSpec(name=args.dataset, messages=args.messages)
    groupings = args.groupings.split(",")
    runs: dict[str, list[dict[str, Any]]] = {g: [] for g in groupings}
    with LocalBroker(root / "kafka") as broker:
        kafka = KafkaClient.from_config(settings.kafka, broker.start())
        produced = produce(make_dataset(spec), kafka, "physical", args.partitions)
        warm = produce(make_dataset(spec.model_copy(update={"messages": 20_000})), kafka, "warm-up",
                       args.partitions)  # fmt: skip
        spark = build_spark(python_daemon=WORKER_DAEMON, app_name="dkg-physical", master=master)
        for grouping in groupings:
            physical_run(spark, kafka, "warm-up", grouping, warm, args, root / f"warm-{grouping.lower()}")
        for number in range(args.rounds):  # ABBA...: each grouping first as often as last
            for grouping in groupings if number % 2 == 0 else groupings[::-1]:
                runs[grouping].append(physical_run(spark, kafka, "physical", grouping, produced,
                                                   args, root / f"{grouping.lower()}-{number}"))  # fmt: skip
        live_runs = [_live(spark, kafka, broker.status().pid or 0, g, args, root,
                           settings.run.trigger_interval_s)
                     for g in (groupings if args.rate else ())]  # fmt: skip
        spark.stop()
    results = [_median_run(runs[g]) for g in groupings if runs[g]]  # --rounds 0: live only
    summary: dict[str, Any] = {"master": master, "messages": produced, "process_ms": args.process_ms,
                               "workers": args.workers, "rounds": args.rounds, "runs": results,
                               "live": live_runs}  # fmt: skip
    by_name = {r["grouping"]: r for r in results}
    if {"KEY", "DYNAMIC_KEY"} <= by_name.keys():
        key, dkg = by_name["KEY"], by_name["DYNAMIC_KEY"]
        summary["ratio_key_over_dynamic_key"] = {
            "batch_p50": round(key["batch_s"]["p50"] / dkg["batch_s"]["p50"], 2),
            "batches_sum": round(key["batch_s"]["sum"] / dkg["batch_s"]["sum"], 2),
            "drain_latency_p99": round(key["drain_latency_s"]["p99"] / dkg["drain_latency_s"]["p99"], 2),
            "ideal": round(key["busiest_share"] / dkg["busiest_share"], 2),
        }  # fmt: skip
    print(f"{master}, {produced:,} {args.dataset} messages, W={args.workers}, "
          f"{args.process_ms} ms of CPU per tuple, median of {args.rounds} round(s)")  # fmt: skip
    print(_table(results))
    if "ratio_key_over_dynamic_key" in summary:
        ratio = summary["ratio_key_over_dynamic_key"]
        print(f"KEY / DYNAMIC_KEY: micro-batches {ratio['batches_sum']}x (median batch "
              f"{ratio['batch_p50']}x), drain p99 latency {ratio['drain_latency_p99']}x; "
              f"ideal {ratio['ideal']}x")  # fmt: skip
    for run in live_runs:
        latency = run["latency_ms"]
        print(f"live at {args.rate:,} msg/s, {run['grouping']}: produce -> gold p50 "
              f"{latency['p50'] / 1000:.1f} s, p99 {latency['p99'] / 1000:.1f} s (first quarter "
              f"p99 {latency['first_quarter']['p99'] / 1000:.1f} s, last quarter "
              f"{latency['last_quarter']['p99'] / 1000:.1f} s)")  # fmt: skip
    return summary


def main() -> None:
    """Run the groupings over the same topic and print the side-by-side table (and JSON)."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    parser.add_argument("--messages", type=int, default=400_000)
    parser.add_argument("--dataset", default="COUNTRY_SKEW_R80")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--process-ms", type=float, default=0.05, help="CPU per tuple, ms")
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--max-offsets", type=int, default=100_000,
                        help="Kafka messages per micro-batch: the same batches for every grouping")  # fmt: skip
    parser.add_argument("--groupings", default="KEY,DYNAMIC_KEY")
    parser.add_argument("--rounds", type=int, default=2,
                        help="drains of each grouping, in turns (0: only the live runs)")  # fmt: skip
    parser.add_argument("--rate", type=int, default=0,
                        help="also run each grouping live, the producer writing this many msg/s")  # fmt: skip
    parser.add_argument("--live-messages", type=int, default=280_000,
                        help="messages the live producer writes")  # fmt: skip
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--master", default="local[2]", help="local[N] or spark://HOST:PORT")
    where.add_argument("--cluster", action="store_true",
                       help="start a standalone cluster of two one-core workers and run on it")  # fmt: skip
    parser.add_argument("--output", type=Path, default=Path("bench/results/physical.json"))
    args = parser.parse_args()
    configure_logging()
    settings = load_settings(env={}).settings
    root = Path(tempfile.mkdtemp(prefix="dkg-physical-"))
    if args.cluster:
        with StandaloneCluster(root / "standalone", workers=2, cores=1) as cluster:
            summary = _compare(args, cluster.url, root, settings)
    else:
        summary = _compare(args, args.master, root, settings)
    publish(summary, args.output)


if __name__ == "__main__":
    main()
