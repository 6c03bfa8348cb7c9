"""The join end to end: Kafka -> Spark (partition-aware join) -> Delta, pairs/s and memory.

Produces the two generated topics into a local broker, lets the broker settle,
then drains them through the job ``dkg join`` runs (the same ``run_join``), and
reports joined pairs per second of the join's own time, the join latency (p50,
p99: ``gold.join_stats``, in event time), each micro-batch's time, and the CPU
time and resident memory of the driver, the Spark JVM, its Python workers and
the broker, sampled every second (largest in the first and in the last quarter
of the run). The first micro-batch also starts Spark's Python workers and warms
the JVM's compiler; ``warm_pairs_per_s`` leaves it out.

    python -m bench.join_pipeline_bench --lefts 2000000
"""

from __future__ import annotations

import argparse
import logging
import multiprocessing
import tempfile
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from bench.console import configure_logging, publish
from bench.procfs import ProcessSampler, wait_until_idle
from bronze.join_data import JoinDataSpec, generate
from core.config import load_settings
from core.kafka.broker import LocalBroker
from core.kafka.client import KafkaClient
from core.spark.session import build_spark
from core.tables import DeltaRsBackend
from core.warehouse import Warehouse
from pipelines.join_pipeline import JoinRequest, ensure_phase, ground_truth_check, run_join
from pipelines.pipeline_runtime import WORKER_DAEMON
from silver.join.engine import JoinParams

logger = logging.getLogger("bench.join_pipeline")


class _BatchLog(logging.Handler):
    """Each micro-batch's input rows and time, from the join job's progress log."""

    def __init__(self) -> None:
        super().__init__()
        self.batches: list[tuple[int, int]] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.msg.startswith("join batch %s: %s rows in %s ms") and record.args:
            _batch, rows, millis, _phases = record.args  # type: ignore[misc]
            # The figures arrive formatted for reading (``400,000``).
            self.batches.append((int(rows.replace(",", "")), int(millis.replace(",", ""))))


def _produce(request: JoinRequest) -> int:
    """Both topics, in a process of their own so the generated data stays out of the driver."""
    configure_logging()
    return ensure_phase(request, generate(request.data), 0)


def measure(args: argparse.Namespace) -> dict[str, Any]:
    """Produce, settle, join in a folder removed afterwards (about 0.9 GB per 2 M lefts)."""
    with tempfile.TemporaryDirectory(prefix="dkg-join-bench-") as root:
        return _measure(args, Path(root))


def _measure(args: argparse.Namespace, root: Path) -> dict[str, Any]:
    """The figures as one JSON-ready dict."""
    data = JoinDataSpec(lefts=args.lefts)
    topics = (f"bench-{args.lefts}-left", f"bench-{args.lefts}-right")
    with LocalBroker(root / "kafka") as broker:
        kafka = KafkaClient.from_config(load_settings(env={}).settings.kafka, broker.start())
        broker_pid = broker.status().pid
        request = JoinRequest(data, topics, kafka, JoinParams(partitions=(4, 4)),
                              max_offsets_per_trigger=args.max_offsets)  # fmt: skip
        spawn = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=1, mp_context=spawn) as producer:
            produced = producer.submit(_produce, request).result()
        settled = wait_until_idle(broker_pid)
        spark = build_spark(python_daemon=WORKER_DAEMON, app_name="dkg-join-bench", master="local[2]")
        processes = ProcessSampler(named={broker_pid: "broker"})
        processes.start()
        warehouse, backend = Warehouse(root / "lake"), DeltaRsBackend()
        batch_log = _BatchLog()
        logging.getLogger("pipelines.join_pipeline").addHandler(batch_log)
        result = run_join(spark, request, warehouse, backend)
        processes.stop()
        check = ground_truth_check(backend, warehouse, result.run_id, data)
        spark.stop()
    matched, batches = result.summary["matched"], batch_log.batches
    # Pairs come out in proportion to the records read (one match ratio throughout).
    warm_rows, warm_ms = sum(r for r, _ in batches[1:]), sum(m for _, m in batches[1:])
    warm = matched / produced * warm_rows / (warm_ms / 1000) if warm_ms else 0.0
    return {"lefts": args.lefts, "messages": produced, "broker_settle_s": round(settled, 1),
            "join_s": round(result.join_seconds, 1),
            "pairs_per_s": round(matched / result.join_seconds), "warm_pairs_per_s": round(warm),
            "matched": matched, "latency_p50_ms": result.summary["latency_p50_ms"],
            "latency_p99_ms": result.summary["latency_p99_ms"], "check": check, "batches": batches,
            "cpu_s": processes.cpu_by_kind(), "rss_mb": processes.summary(),
            "rss_mb_per_minute": processes.per_minute()}  # fmt: skip


def main() -> None:
    """Command line: ``--lefts``, ``--max-offsets``, ``--output``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lefts", type=int, default=2_000_000)
    parser.add_argument("--max-offsets", type=int, default=200_000, help="per topic and batch")
    parser.add_argument("--output", type=Path, default=Path("bench/results/join_pipeline.json"))
    args = parser.parse_args()
    configure_logging()
    publish(measure(args), args.output)


if __name__ == "__main__":
    main()
