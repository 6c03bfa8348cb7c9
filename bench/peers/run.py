"""Run both peers on the pipeline benchmark's drain topic; check them and the pipeline; ratios.

Each result is checked against the generator's own counts (:mod:`bench.peers.oracle`),
the pipeline's ``gold.key_counts`` included; a ratio is given only against a peer
whose counts are right. Speed is messages per second of each system's own run
time, and messages per CPU-second of every process it kept busy (the broker
included: quix-streams writes its state's changelog there).
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow.compute as pc

from bench.peers import quix, spark_job
from bench.peers.oracle import check, expected_counts
from bench.procfs import ProcessSampler, cpu_seconds, wait_until_idle
from bronze.datasets.base import DatasetSpec
from core.kafka.client import KafkaClient
from core.kafka.source import KafkaTopic
from core.tables import DeltaRsBackend
from core.warehouse import Warehouse
from gold.schemas import KEY_COUNTS

__all__ = ["run_peers"]

logger = logging.getLogger("bench.peers")


def _figures(messages: int, seconds: float, cpu: dict[str, float]) -> dict[str, Any]:
    total = sum(cpu.values())
    return {"seconds": round(seconds, 1), "msg_per_s": round(messages / seconds),
            "cpu_s": round(total, 1), "msg_per_cpu_s": round(messages / total),
            "cpu_s_by_process": cpu}  # fmt: skip


def _spark(spark: Any, topic: KafkaTopic, root: Path, messages: int,
           broker_pid: int) -> tuple[pd.DataFrame, dict[str, Any]]:  # fmt: skip
    processes = ProcessSampler(named={broker_pid: "broker"})
    processes.start()
    started = time.monotonic()
    counts = spark_job.count_windows(spark, topic, root / "window_counts", root / "_checkpoint",
                                     timeout_s=600 + messages / 1_000)  # fmt: skip
    seconds = time.monotonic() - started
    processes.stop()
    return counts, _figures(messages, seconds, processes.cpu_by_kind())


def _quix(python: str, kafka: KafkaClient, topic: str, root: Path, messages: int,
          broker_pid: int) -> tuple[pd.DataFrame, dict[str, Any]]:  # fmt: skip
    broker = cpu_seconds(broker_pid)
    run = quix.count_windows(python, kafka, topic, messages, root, timeout_s=600 + messages / 1_000)
    cpu = {"quix": round(run.cpu_s, 1), "broker": round(cpu_seconds(broker_pid) - broker, 1)}
    return run.counts, _figures(messages, run.seconds, cpu)


def _gold(warehouse: Warehouse, run_id: str) -> pd.DataFrame:
    table = DeltaRsBackend().read(warehouse.table_uri(*KEY_COUNTS))
    return table.filter(pc.equal(table["run_id"], run_id)).to_pandas()


def run_peers(spark: Any, kafka: KafkaClient, broker_pid: int, topic: KafkaTopic,
              spec: DatasetSpec, drain: dict[str, Any], warehouse: Warehouse, run_id: str,
              python: str, root: Path) -> dict[str, Any]:  # fmt: skip
    """Both peers on ``topic`` (what the drain read), each checked; the drain's ratios to them.

    Args:
        spark: the benchmark's session (the Spark peer runs in it, after the drain).
        kafka: the broker's clients.
        broker_pid: the local broker's process (its CPU counts for each system).
        topic: the drain's topic, with the drain's source settings.
        spec: the dataset the topic was produced from (the oracle's input).
        drain: the drain's figures (``msg_per_s``, ``cpu_s`` by process kind).
        warehouse: where the drain wrote gold.
        run_id: the drain's run.
        python: the quix-streams virtualenv's interpreter (:func:`bench.peers.quix.peers_python`).
        root: a scratch folder.
    """
    expected = expected_counts(spec)
    messages = int(expected["count"].sum())
    pipeline = {**_figures(messages, messages / drain["msg_per_s"], drain["cpu_s"]),
                "oracle": check(_gold(warehouse, run_id), expected)}  # fmt: skip
    result: dict[str, Any] = {"pipeline": pipeline}
    peers = {"spark": lambda: _spark(spark, topic, root / "spark", messages, broker_pid),
             "quixstreams": lambda: _quix(python, kafka, topic.topic, root / "quix", messages,
                                          broker_pid)}  # fmt: skip
    for name, run in peers.items():
        wait_until_idle(broker_pid)
        logger.info("peer %s: counting %d messages", name, messages)
        counts, figures = run()
        checked = check(counts, expected)
        right = checked["correct"]
        result[name] = {**figures, "oracle": checked, "pipeline_vs_peer": {
            measure: round(pipeline[measure] / figures[measure], 2) if right else None
            for measure in ("msg_per_s", "msg_per_cpu_s")}}  # fmt: skip
    return result
