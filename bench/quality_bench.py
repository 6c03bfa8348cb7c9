"""The data-quality gates of a finite run: what the driver takes in and spends on them.

The pipeline benchmark runs without gates, so it cannot show what they cost. This
one produces N messages to the embedded broker (as ``bench/pipeline_bench.py``
does), runs bronze -> silver -> gold as ``dkg run`` does, with the gate after each
layer, and measures each gate alone:

- ``driver_received_mb``: table data the driver process took in, counted where it
  arrives (``bench/driver_io.py``: Spark results collected to Python, Delta and
  Parquet reads by the driver itself);
- ``driver_cpu_s``: CPU seconds of the driver's Python process;
- ``driver_rss_max_mb``: the driver process's largest resident memory while the gate ran;
- ``cpu_s``: CPU seconds per process kind (in local mode the JVM is the driver's
  JVM and the executors at once; Python workers read the tables for Spark);
- ``seconds``: the gate's wall time.

Whichever gates the checkout has are measured, so the same script measures the
code before and after a change.

Usage: ``python -m bench.quality_bench [--messages 1000000] [--output bench/results/quality.json]``
"""

from __future__ import annotations

import argparse
import logging
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.console import configure_logging, publish
from bench.driver_io import counting_driver_bytes
from bench.procfs import ProcessSampler, wait_until_idle
from bronze.datasets.base import DatasetSpec
from bronze.datasets.registry import make_dataset
from bronze.producer import produce
from core.config import QualityConfig, RunConfig, load_settings
from core.kafka.broker import LocalBroker
from core.kafka.client import KafkaClient
from core.kafka.source import KafkaTopic
from core.run_plan import RunPlan
from core.spark.session import build_spark
from core.tables import DeltaRsBackend
from core.warehouse import LAYERS, Warehouse
from pipelines.checks import layer_checks, quality_gate
from pipelines.medallion import run_finite
from pipelines.pipeline_runtime import WORKER_DAEMON

logger = logging.getLogger("bench.quality")


class _MeasuredGate:
    """Wraps a job's gate: runs it as the job would, and records what each layer's gate cost."""

    def __init__(self, gate: Callable[[str], None], broker_pid: int) -> None:
        self.gate = gate
        self.broker_pid = broker_pid
        self.layers: dict[str, dict[str, Any]] = {}

    def __call__(self, layer: str) -> None:
        wait_until_idle(self.broker_pid)  # the broker's snapshot writes are not the gate's work
        processes = ProcessSampler(named={self.broker_pid: "broker"})
        processes.start()
        started, cpu = time.monotonic(), time.process_time()
        with counting_driver_bytes() as received:
            self.gate(layer)
        driver_cpu = time.process_time() - cpu
        seconds = time.monotonic() - started
        processes.stop()
        self.layers[layer] = {
            "seconds": round(seconds, 1), "driver_received_bytes": received.total,
            "driver_received_mb": received.megabytes(),
            "driver_cpu_s": round(driver_cpu, 1),
            "driver_rss_max_mb": round(max(s["driver"] for s in processes.samples)),
            "cpu_s": processes.cpu_by_kind(),
        }  # fmt: skip
        logger.info("%s gate: %s", layer, self.layers[layer])

    def totals(self) -> dict[str, Any]:
        layers = self.layers.values()
        return {
            "seconds": round(sum(v["seconds"] for v in layers), 1),
            "driver_received_bytes": sum(v["driver_received_bytes"] for v in layers),
            "driver_cpu_s": round(sum(v["driver_cpu_s"] for v in layers), 1),
            "driver_rss_max_mb": max(v["driver_rss_max_mb"] for v in layers),
        }


def measure(args: argparse.Namespace) -> dict[str, Any]:
    """Produce N messages, run the job with measured gates after each layer."""
    root = Path(tempfile.mkdtemp(prefix="dkg-quality-bench-"))
    with LocalBroker(root / "kafka") as broker:
        # The embedded broker with the local profile's client settings, as `dkg run` has them.
        kafka = KafkaClient.from_config(load_settings(env={}).settings.kafka, broker.start())
        spark = build_spark(python_daemon=WORKER_DAEMON, app_name="dkg-quality-bench", master="local[2]")
        broker_pid = broker.status().pid
        topic = "bench-quality"
        spec = DatasetSpec(name="ZIPF", messages=args.messages, start_ms=time.time_ns() // 1_000_000)
        produce(make_dataset(spec), kafka, topic, args.partitions)
        wait_until_idle(broker_pid)
        warehouse, backend = Warehouse(root / "lakehouse"), DeltaRsBackend()
        run = RunPlan(run_id="bench-quality", source_type="ZIPF", grouping=args.grouping,
                       splitters=args.partitions, run=RunConfig(workers=args.workers))  # fmt: skip
        # Importing GX and building its context cost seconds once per process, whatever the
        # gates read: done before the run, so the figures are the gates' own work.
        layer_checks(LAYERS, QualityConfig(), run.workers)
        gate = _MeasuredGate(quality_gate(spark, warehouse, backend, run.run_id, run.workers,
                                          QualityConfig()), broker_pid)  # fmt: skip
        started = time.monotonic()
        run_finite(spark, KafkaTopic(kafka, topic, "earliest", args.max_offsets), run, warehouse,
                   backend, after_stage=gate)  # fmt: skip
        seconds = time.monotonic() - started
        spark.stop()
    shutil.rmtree(root, ignore_errors=True)
    return {"messages": args.messages, "job_seconds_with_gates": round(seconds, 1),
            "gates": gate.layers, "gates_total": gate.totals()}  # fmt: skip


def main() -> None:
    """Run the measurement and print (and save) one JSON document."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--workers", type=int, default=10)
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--grouping", default="DYNAMIC_KEY")
    parser.add_argument("--max-offsets", type=int, default=500_000, help="per bronze micro-batch")
    parser.add_argument("--output", type=Path, default=Path("bench/results/quality.json"))
    args = parser.parse_args()
    configure_logging()
    publish(measure(args), args.output)


if __name__ == "__main__":
    main()
