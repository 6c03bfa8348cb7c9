"""The main job: run each grouping over a topic through the lakehouse, finite or continuous.

Each run follows its plan (:mod:`pipelines.planning`); its id is derived from
what defines it, so the same command started again on the same warehouse
resumes from its checkpoints instead of starting over, in either mode. A finite run processes the topic up to the end offsets it sees at start; a
continuous one follows it until :func:`run_groupings` is told to stop.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

from bronze.datasets.base import MessageSource
from bronze.producer import produce
from core.config import QualityConfig
from core.kafka.admin import BrokerError, end_offsets, topic_exists
from core.kafka.client import KafkaClient
from core.kafka.source import KafkaTopic
from core.logs import RESULT
from core.quality import DataQualityError
from core.run_plan import RunPlan
from core.tables.base import TableBackend
from core.warehouse import Warehouse
from gold.runs import cumulative_metrics, record_run, run_row
from pipelines.checks import quality_gate
from pipelines.continuous import run_continuous
from pipelines.medallion import StageTimes, run_finite
from pipelines.run_attempts import current_attempt, next_attempt

__all__ = ["ensure_topic_has", "run_groupings"]

logger = logging.getLogger(__name__)


def ensure_topic_has(client: KafkaClient, topic: str, source: MessageSource, wanted: int,
                     speed: float | None = None,
                     progress: Callable[[int], None] | None = None) -> int:  # fmt: skip
    """Produce ``source``'s ``wanted`` messages unless the topic already holds exactly that many."""
    if topic_exists(client, topic):
        present = sum(end_offsets(client, topic).values())
        if present == wanted:
            logger.info("topic %s already holds the %s messages", topic, f"{wanted:,}", extra=RESULT)
            return present
        if present:
            raise BrokerError(
                f"topic {topic} holds {present} messages, not the {wanted} generated for it "
                "(a producer was interrupted, or other data is there); use another --topic, "
                "or --format to process the topic as it is"
            )
    return produce(source, client, topic, None, speed, progress)


def run_groupings(spark: Any, client: KafkaClient, plans: Sequence[RunPlan], warehouse: Warehouse,
                  backend: TableBackend, quality: QualityConfig | None = None,
                  stop: threading.Event | None = None, starting_offsets: str = "earliest",
                  recompute: bool = False) -> list[dict[str, Any]]:  # fmt: skip
    """Run every plan over its topic; one cumulative metrics row each.

    Args:
        spark: the session.
        client: the Kafka.
        plans: the runs (:func:`plan_runs`).
        warehouse: where tables and checkpoints live.
        backend: the Delta backend.
        quality: the data-quality thresholds of each layer's gate; None: no gates.
        stop: continuous mode (``run.continuous``): set to stop cleanly.
        starting_offsets: where a new run starts reading (``earliest`` or ``latest``).
        recompute: start each run afresh, replacing what it stored (:mod:`pipelines.run_attempts`).
    """
    if any(plan.run.continuous for plan in plans) and len(plans) != 1:
        raise ValueError("continuous mode runs one grouping at a time")
    results = []
    for plan in plans:
        row = run_row(plan)
        record_run(backend, warehouse, row)  # "running" before any attempt clears the run's rows
        plan = (next_attempt if recompute else current_attempt)(plan, warehouse, backend)
        topic = KafkaTopic(client, plan.topic, starting_offsets,
                           plan.run.bronze_max_offsets_per_trigger)  # fmt: skip
        try:
            times = _run_one(spark, topic, plan, quality, warehouse, backend, stop)
        except DataQualityError:
            row.update(status="failed", finished_at=datetime.now(UTC))
            record_run(backend, warehouse, row)
            raise
        row.update(status="stopped" if plan.run.continuous else "succeeded",
                   finished_at=datetime.now(UTC), seconds=sum(times.seconds.values()))  # fmt: skip
        record_run(backend, warehouse, row)
        results.append({"grouping": plan.label, **cumulative_metrics(backend, warehouse, plan.run_id)})
    return results


def _run_one(spark: Any, topic: KafkaTopic, plan: RunPlan, quality: QualityConfig | None,
             warehouse: Warehouse, backend: TableBackend,
             stop: threading.Event | None) -> StageTimes:  # fmt: skip
    if plan.run.continuous:
        stopped = stop or threading.Event()
        return run_continuous(spark, topic, plan, warehouse, backend, stopped.is_set,
                              trigger_s=plan.run.trigger_interval_s)  # fmt: skip
    gate = (None if quality is None else
            quality_gate(spark, warehouse, backend, plan.run_id, plan.workers, quality))  # fmt: skip
    return run_finite(spark, topic, plan, warehouse, backend, after_stage=gate)
