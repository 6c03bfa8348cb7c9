"""The main job: produce a dataset into Kafka, run each grouping through the lakehouse.

Run ids are derived from what defines a run (topic, grouping, workers,
splitters, parameters), so the same command started again on the same
warehouse resumes from its checkpoints instead of starting over.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd
import pyarrow.compute as pc

from bronze.datasets.base import DatasetSpec
from bronze.datasets.registry import make_dataset
from bronze.producer import produce
from core.config import QualityConfig
from core.kafka.broker import BrokerError, end_offsets, topic_exists
from core.kafka.source import KafkaTopic
from core.quality import DataQualityError
from core.tables.base import TableBackend
from core.warehouse import Warehouse
from pipelines.checks import quality_gate
from pipelines.jobs import RunSpec, run_finite

__all__ = ["JobRequest", "ensure_topic_has", "run_groupings", "run_id_for"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class JobRequest:
    """What ``dkg run`` was asked to do."""

    dataset: DatasetSpec
    topic: str
    partitions: int
    workers: int
    splitters: int
    speed: float | None
    bootstrap: str
    groupings: Sequence[tuple[str, str, dict[str, Any]]]  # (label, name, params)
    max_offsets_per_trigger: int | None = 500_000
    quality: QualityConfig | None = None  # None: no data-quality gates


def run_id_for(
    topic: str, grouping: str, workers: int, splitters: int, params: dict[str, Any]
) -> str:
    """A stable id: the same run asked again resumes rather than duplicates."""
    digest = hashlib.sha256(json.dumps(params, sort_keys=True).encode()).hexdigest()[:8]
    # A label such as DYNAMIC_KEY(mode=seed) must make a valid checkpoint name.
    name = re.sub(r"[^a-z0-9_.-]+", "_", grouping.lower()).strip("_")
    return f"{topic}.{name}.w{workers}.s{splitters}.{digest}"


def ensure_topic_has(request: JobRequest, progress: Callable[[int], None] | None = None) -> int:
    """Produce the dataset unless the topic already holds exactly its messages."""
    wanted = request.dataset.messages
    if topic_exists(request.bootstrap, request.topic):
        present = sum(end_offsets(request.bootstrap, request.topic).values())
        if present == wanted:
            logger.info("topic %s already holds the %d messages", request.topic, wanted)
            return present
        if present:
            raise BrokerError(
                f"topic {request.topic} holds {present} messages, not the {wanted} asked for "
                "(a producer was interrupted, or other data is there); use another --topic"
            )
    return produce(make_dataset(request.dataset), request.bootstrap, request.topic,
                   request.partitions, request.speed, progress)  # fmt: skip


def _write_run(backend: TableBackend, warehouse: Warehouse, row: dict[str, Any]) -> None:
    frame = pd.DataFrame([{**row, "parameters": json.dumps(row["parameters"], sort_keys=True)}])
    backend.merge(warehouse.table_path("gold", "runs"), frame, ["run_id"], "runs",
                  time.time_ns() // 1_000)  # fmt: skip


def _cumulative(backend: TableBackend, warehouse: Warehouse, run_id: str) -> dict[str, Any]:
    table = backend.read(warehouse.table_path("gold", "distribution_metrics"))
    rows = table.filter(pc.and_(pc.equal(table["run_id"], run_id),
                                pc.equal(table["scope"], "cumulative"))).to_pylist()  # fmt: skip
    return rows[0] if rows else {}


def run_groupings(spark: Any, request: JobRequest, warehouse: Warehouse, backend: TableBackend,
                  starting_offsets: str = "earliest") -> list[dict[str, Any]]:  # fmt: skip
    """Run every requested grouping over the topic; one cumulative metrics row each."""
    results = []
    for label, name, params in request.groupings:
        run_id = run_id_for(request.topic, label, request.workers, request.splitters, params)
        row = {"run_id": run_id, "source": request.dataset.name, "topic": request.topic,
               "grouping": name, "label": label, "workers": request.workers,
               "splitters": request.splitters, "messages": request.dataset.messages,
               "parameters": params, "status": "running", "started_at": pd.Timestamp.now(tz="UTC"),
               "finished_at": pd.NaT, "seconds": 0.0}  # fmt: skip
        _write_run(backend, warehouse, row)
        spec = RunSpec(run_id=run_id, source_type=request.dataset.name, grouping=name,
                       workers=request.workers, splitters=request.splitters, params=params)  # fmt: skip
        topic = KafkaTopic(request.bootstrap, request.topic, starting_offsets,
                           request.max_offsets_per_trigger)  # fmt: skip
        gate = (None if request.quality is None else
                quality_gate(warehouse, backend, run_id, request.workers, request.quality))  # fmt: skip
        try:
            times = run_finite(spark, topic, spec, warehouse, backend, after_stage=gate)
        except DataQualityError:
            row.update(status="failed", finished_at=pd.Timestamp.now(tz="UTC"))
            _write_run(backend, warehouse, row)
            raise
        row.update(status="succeeded", finished_at=pd.Timestamp.now(tz="UTC"),
                   seconds=sum(times.seconds.values()))  # fmt: skip
        _write_run(backend, warehouse, row)
        results.append({"grouping": label, **_cumulative(backend, warehouse, run_id)})
    return results
