"""The main job: run each grouping over a topic through the lakehouse, finite or continuous.

Run ids are derived from what defines a run (topic, grouping, workers,
splitters, parameters), so the same command started again on the same
warehouse resumes from its checkpoints instead of starting over, in either mode.
A finite run processes the topic up to the end offsets it sees at start; a
continuous one follows it until :func:`run_groupings` is told to stop.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd
import pyarrow.compute as pc

from bronze.datasets.base import DatasetSpec
from bronze.datasets.registry import make_dataset
from bronze.producer import produce
from core.config import QualityConfig, RunConfig
from core.kafka.admin import BrokerError, end_offsets, topic_exists
from core.kafka.client import KafkaClient
from core.kafka.source import KafkaTopic
from core.quality import DataQualityError
from core.run_spec import RunSpec
from core.tables.base import TableBackend
from core.warehouse import Warehouse
from pipelines.checks import quality_gate
from pipelines.continuous import run_continuous
from pipelines.medallion import StageTimes, run_finite

__all__ = ["JobRequest", "ensure_topic_has", "run_groupings", "run_id_for"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class JobRequest:
    """What ``dkg run`` was asked to do.

    Attributes:
        topic: the Kafka topic.
        source_type: how its messages are parsed (a dataset name or a format's source type).
        source: what ``gold.runs`` records as the source (dataset or format name).
        groupings: ``(label, name, params)`` of each grouping to run.
        run: the job's settings (workers, windows, queue model, batch sizes, triggers).
        splitters: routing instances.
        messages: messages the run covers, when known (``gold.runs``).
        quality: the data-quality thresholds; None: no gates.
    """

    topic: str
    source_type: str
    source: str
    groupings: Sequence[tuple[str, str, dict[str, Any]]]
    run: RunConfig
    splitters: int
    messages: int | None = None
    quality: QualityConfig | None = None


def run_id_for(
    topic: str, grouping: str, workers: int, splitters: int, params: dict[str, Any]
) -> str:
    """A stable id: the same run asked again resumes rather than duplicates."""
    digest = hashlib.sha256(json.dumps(params, sort_keys=True).encode()).hexdigest()[:8]
    # A label such as DYNAMIC_KEY(mode=seed) must make a valid checkpoint name.
    name = re.sub(r"[^a-z0-9_.-]+", "_", grouping.lower()).strip("_")
    return f"{topic}.{name}.w{workers}.s{splitters}.{digest}"


def ensure_topic_has(client: KafkaClient, topic: str, dataset: DatasetSpec,
                     speed: float | None = None,
                     progress: Callable[[int], None] | None = None) -> int:  # fmt: skip
    """Produce a generated dataset unless the topic already holds exactly its messages."""
    wanted = dataset.messages
    if topic_exists(client, topic):
        present = sum(end_offsets(client, topic).values())
        if present == wanted:
            logger.info("topic %s already holds the %d messages", topic, wanted)
            return present
        if present:
            raise BrokerError(
                f"topic {topic} holds {present} messages, not the {wanted} generated for it "
                "(a producer was interrupted, or other data is there); use another --topic, "
                "or --format to process the topic as it is"
            )
    return produce(make_dataset(dataset), client, topic, None, speed, progress)


def _write_run(backend: TableBackend, warehouse: Warehouse, row: dict[str, Any]) -> None:
    frame = pd.DataFrame([{**row, "parameters": json.dumps(row["parameters"], sort_keys=True)}])
    backend.merge(warehouse.table_uri("gold", "runs"), frame, ["run_id"], "runs",
                  time.time_ns() // 1_000)  # fmt: skip


def _cumulative(backend: TableBackend, warehouse: Warehouse, run_id: str) -> dict[str, Any]:
    uri = warehouse.table_uri("gold", "distribution_metrics")
    if backend.version(uri) is None:
        return {}
    table = backend.read(uri)
    rows = table.filter(pc.and_(pc.equal(table["run_id"], run_id),
                                pc.equal(table["scope"], "cumulative"))).to_pylist()  # fmt: skip
    return rows[0] if rows else {}


def _run_spec(request: JobRequest, run_id: str, name: str, params: dict[str, Any]) -> RunSpec:
    run = request.run
    return RunSpec(run_id=run_id, source_type=request.source_type, grouping=name,
                   workers=run.workers, splitters=request.splitters, params=params,
                   worker_window_ms=run.worker_window_ms,
                   aggregation_window_ms=run.aggregation_window_ms,
                   process_ms=run.process_ms, speed=run.speed,
                   silver_max_bytes_per_trigger=run.silver_max_bytes_per_trigger)  # fmt: skip


def run_groupings(spark: Any, client: KafkaClient, request: JobRequest, warehouse: Warehouse,
                  backend: TableBackend, stop: threading.Event | None = None,
                  starting_offsets: str = "earliest") -> list[dict[str, Any]]:  # fmt: skip
    """Run every requested grouping over the topic; one cumulative metrics row each.

    Args:
        spark: the session.
        client: the Kafka.
        request: what to run.
        warehouse: where tables and checkpoints live.
        backend: the Delta backend.
        stop: continuous mode (``request.run.continuous``): set to stop cleanly.
        starting_offsets: where a new run starts reading (``earliest`` or ``latest``).
    """
    continuous = request.run.continuous
    if continuous and len(request.groupings) != 1:
        raise ValueError("continuous mode runs one grouping at a time")
    results = []
    for label, name, params in request.groupings:
        run_id = run_id_for(request.topic, label, request.run.workers, request.splitters, params)
        row = {"run_id": run_id, "source": request.source, "topic": request.topic,
               "grouping": name, "label": label, "workers": request.run.workers,
               "splitters": request.splitters, "messages": request.messages,
               "parameters": params, "status": "running", "started_at": pd.Timestamp.now(tz="UTC"),
               "finished_at": pd.NaT, "seconds": 0.0}  # fmt: skip
        _write_run(backend, warehouse, row)
        spec = _run_spec(request, run_id, name, params)
        topic = KafkaTopic(client, request.topic, starting_offsets,
                           request.run.bronze_max_offsets_per_trigger)  # fmt: skip
        try:
            times = _run_one(spark, topic, spec, request, warehouse, backend, stop)
        except DataQualityError:
            row.update(status="failed", finished_at=pd.Timestamp.now(tz="UTC"))
            _write_run(backend, warehouse, row)
            raise
        row.update(status="stopped" if continuous else "succeeded",
                   finished_at=pd.Timestamp.now(tz="UTC"), seconds=sum(times.seconds.values()))  # fmt: skip
        _write_run(backend, warehouse, row)
        results.append({"grouping": label, **_cumulative(backend, warehouse, run_id)})
    return results


def _run_one(spark: Any, topic: KafkaTopic, spec: RunSpec, request: JobRequest,
             warehouse: Warehouse, backend: TableBackend,
             stop: threading.Event | None) -> StageTimes:  # fmt: skip
    run = request.run
    if run.continuous:
        stopped = stop or threading.Event()
        return run_continuous(spark, topic, spec, warehouse, backend, stopped.is_set,
                              trigger_s=run.trigger_interval_s)  # fmt: skip
    gate = (None if request.quality is None else
            quality_gate(spark, warehouse, backend, spec.run_id, spec.workers, request.quality))  # fmt: skip
    return run_finite(spark, topic, spec, warehouse, backend, after_stage=gate)
