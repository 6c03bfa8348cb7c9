"""Connects the medallion's streaming queries: Kafka -> bronze -> silver -> gold.

Each layer builds its own stages (``bronze.stage``, ``silver.stage``); this
module only runs them in data-flow order: silver's query alone when its tasks
land bronze as they read Kafka, else bronze's and then silver's. Each query has
its own checkpoint under ``<state>/_checkpoints/<run_id>-<query>``; every sink
is idempotent per micro-batch (Delta application transactions), so a run killed
at any point and started again with the same run id resumes without loss or
double counting. A finite run drains each stage in order (``availableNow``),
then rebuilds gold.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from pyspark.sql import DataFrame, SparkSession

from bronze.stage import BRONZE
from core.kafka.source import KafkaTopic
from core.logs import figures
from core.profiling import phase_totals
from core.run_plan import RunPlan
from core.spark.input_rows import input_rows
from core.spark.python_workers import start_python_workers
from core.stages import RunContext, Stage, StageDef, start_query
from core.tables.base import TableBackend
from core.warehouse import LAYERS, Warehouse
from gold.refresh import refresh_gold
from pipelines.steps import job_step
from silver.stage import SILVER

__all__ = ["Source", "StageTimes", "gated_steps", "run_finite", "stages"]

logger = logging.getLogger(__name__)


def stages(run: RunContext) -> tuple[StageDef, ...]:
    """The run's streaming queries in data-flow order; each reads the previous one's output."""
    return (SILVER,) if run.landed_topic is not None else (BRONZE, SILVER)


def _check_step(layer: str) -> str:
    """The job step of ``layer``'s data-quality gate."""
    return f"{layer} checks"


def gated_steps(steps: Sequence[str]) -> tuple[str, ...]:
    """A finite run's steps (its stages', then ``gold``) with the data-quality gates, in the
    order :func:`run_finite` runs them: after each step, a gate per layer it completed
    (silver's query may have landed bronze too)."""
    gated, checked = [], 0
    for step in steps:
        gated.append(step)
        if step in LAYERS:
            written = LAYERS.index(step) + 1
            gated += [_check_step(layer) for layer in LAYERS[checked:written]]
            checked = max(checked, written)
    return tuple(gated)


Source = DataFrame | KafkaTopic
"""What bronze reads: a Kafka topic, or any streaming DataFrame with Kafka's columns."""


@dataclass
class StageTimes:
    """Where a run's time went.

    Attributes:
        seconds: wall-clock seconds per stage.
        profile: per streaming query, Spark's ``durationMs`` phases summed over its
            micro-batches (``addBatch`` is the foreachBatch: compute and write),
            ``batches``, ``rows`` (input rows), and the driver's share of
            ``addBatch`` as ``driver.<phase>`` (collect, aggregate, delta_write, ...).
        batches: per streaming query, each micro-batch's ``(batch id, input rows,
            milliseconds, end)`` in order, ``end`` in epoch seconds (Spark keeps the
            last 100 of a query).
    """

    seconds: dict[str, float] = field(default_factory=dict)
    profile: dict[str, dict[str, int]] = field(default_factory=dict)
    batches: dict[str, list[tuple[int, int, int, float]]] = field(default_factory=dict)

    def batch_seconds(self, name: str) -> float:
        """Seconds the query's micro-batches took: its throughput's time, without the query's
        start (sources, state store) and stop."""
        return self.profile.get(name, {}).get("triggerExecution", 0) / 1000

    def add_progress(self, name: str, progress: Any) -> None:
        """Sum one micro-batch's ``StreamingQueryProgress`` into ``profile[name]``."""
        phases = self.profile.setdefault(name, {})
        for phase, ms in (progress.durationMs or {}).items():
            phases[phase] = phases.get(phase, 0) + int(ms)
        phases["batches"] = phases.get("batches", 0) + 1
        phases["rows"] = phases.get("rows", 0) + input_rows(progress)
        took = int((progress.durationMs or {}).get("triggerExecution", 0))
        began = datetime.fromisoformat(progress.timestamp.replace("Z", "+00:00")).timestamp()
        self.batches.setdefault(name, []).append((int(progress.batchId), input_rows(progress), took,
                                                  began + took / 1000))  # fmt: skip


def _drain(stage: Stage, times: StageTimes) -> None:
    name, started, phases_before = stage.name, time.monotonic(), phase_totals()
    query = start_query(stage, availableNow=True)
    query.awaitTermination()
    wall_s = time.monotonic() - started
    times.seconds[name] = times.seconds.get(name, 0.0) + wall_s
    progresses = query.recentProgress
    for progress in progresses:
        times.add_progress(name, progress)
    profile = times.profile.setdefault(name, {})
    in_batches = sum(int((p.durationMs or {}).get("triggerExecution", 0)) for p in progresses)
    # Starting the query (sources, state store, Python workers) and stopping it.
    profile["outside_batches"] = profile.get("outside_batches", 0) + int(1000 * wall_s) - in_batches
    for phase, seconds in phase_totals().items():
        spent_ms = int(1000 * (seconds - phases_before.get(phase, 0.0)))
        if spent_ms:
            profile[f"driver.{phase}"] = profile.get(f"driver.{phase}", 0) + spent_ms


def run_finite(spark: SparkSession, source: Source, plan: RunPlan, warehouse: Warehouse,
               backend: TableBackend,
               after_stage: Callable[[str], None] | None = None) -> StageTimes:  # fmt: skip
    """Land, parse, route and aggregate everything ``source`` has now, then build gold.

    Args:
        spark: the session.
        source: a Kafka topic (landed by silver's read tasks on a delta-rs
            warehouse, read as rows by bronze's query otherwise) or any streaming DataFrame with Kafka's
            columns (so tests and other sources plug in here).
        plan: the run.
        warehouse: where tables and checkpoints live.
        backend: the Delta backend.
        after_stage: called with ``"bronze"``, ``"silver"`` and ``"gold"`` once that
            layer is written (e.g. a data-quality gate, which stops the run by raising).
    """
    times = StageTimes()
    run = RunContext(spark, source, plan, warehouse, backend)
    start_python_workers(spark)  # not on the first micro-batch's clock
    chain = {stage.name: stage for stage in stages(run)}
    gates = {_check_step(layer): layer for layer in LAYERS}
    first = next(iter(chain))
    # Each step as it timed itself (a query's build and start included): the figure of
    # its done line, so a stage is never reported with two durations.
    took: dict[str, float] = {}
    for name in gated_steps([*chain, "gold"]):
        if name in gates:
            if after_stage is not None:  # the gates report their verdict themselves
                with job_step(plan.run_id, name, result_line=False):
                    after_stage(gates[name])
            continue
        # Only the first stage reads the topic, whose size the plan knows.
        with job_step(plan.run_id, name, total=plan.messages if name == first else None) as step:
            if name == "gold":
                refresh_gold(backend, warehouse, plan, times.batch_seconds("silver"))
            else:
                _drain(chain[name].build(run), times)
        took[name] = step.seconds or 0.0
    times.seconds["gold"] = took["gold"]
    logger.info("run %s stages: %s", plan.run_id, figures(took, "s", decimals=1))
    return times
