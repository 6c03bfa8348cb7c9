"""The join pipeline: two topics (generated, or given as they are), the join, then gold.

One streaming query reads both topics (Kafka -> ``silver.joined``,
``silver.join_rejects``, ``silver.join_state``) with its own checkpoint; gold
is rebuilt from silver afterwards. The join reads Kafka directly rather than a
bronze copy: its sync is about how far each *Kafka partition* has been
consumed, which a landing step would hide. The topics themselves are the
replayable raw record.

A run with a stalled partition produces in two phases and drains the join after
each, so the first drain really sees that partition stand still. Each phase's
production bar counts the messages the generator made for that phase (lefts,
the partners only ``match_ratio`` of them have, closing heartbeats); each
drain's display (:mod:`pipelines.stream_progress`) counts the topics' messages
up to their end offsets at its start.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pyspark.sql import SparkSession
from pyspark.sql.streaming import StreamingQuery

from bronze.join_data import JoinData, JoinDataSpec, generate, produce_phase
from core.config import JoinConfig
from core.kafka.admin import BrokerError, end_offsets, topic_exists
from core.kafka.client import KafkaClient
from core.kafka.source import KafkaTopic
from core.logs import RESULT, figure, figures
from core.run_plan import query_id
from core.spark.input_rows import input_rows
from core.spark.python_workers import python_workers_starting, start_python_workers
from core.stages import Stage, start_query
from core.tables.base import TableBackend
from core.tables.task_files import TaskLanding
from core.warehouse import Warehouse
from gold.join_stats import refresh_join_gold
from pipelines.progress import ProgressReporter
from pipelines.steps import job_step
from silver.join.engine import JoinParams
from silver.join.sink import join_batch_writer
from silver.join.stream import join_stream
from silver.schemas import JOIN_REJECTS, JOIN_STATE, JOINED

__all__ = [
    "JoinRequest",
    "JoinResult",
    "data_spec",
    "ensure_phase",
    "generated_topics",
    "ground_truth_check",
    "join_run_id",
    "phase_messages",
    "run_join",
    "start_join",
]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class JoinRequest:
    """What ``dkg join`` was asked to do.

    Attributes:
        data: the generated data set; None: the topics are joined as they are.
        topics: left and right topic.
        client: the Kafka.
        params: the join's settings.
        shards: stateful groups of the join state.
        max_offsets_per_trigger: per topic and micro-batch.
        stats_window_ms: ``gold.join_stats`` windows.
    """

    data: JoinDataSpec | None
    topics: tuple[str, str]
    client: KafkaClient
    params: JoinParams
    shards: int = 2
    max_offsets_per_trigger: int | None = 200_000
    stats_window_ms: int = 10_000


@dataclass(frozen=True)
class JoinResult:
    """What a run produced: the cumulative gold row and the join's wall-clock time."""

    run_id: str
    summary: dict[str, Any]
    join_seconds: float


def data_spec(conf: JoinConfig, **overrides: Any) -> JoinDataSpec:
    """The generator spec of the ``join:`` config, with command-line ``overrides`` (None: unset).

    Raises:
        ValueError: the spec cannot be generated.
    """
    fields = ("lefts", "match_ratio", "rate", "partitions", "gap_mean_ms", "gap_max_ms",
              "jump_fraction", "jump_max_ms", "stall_at_fraction", "seed")  # fmt: skip
    values = {name: getattr(conf, name) for name in fields}
    values.update({k: v for k, v in overrides.items() if v is not None})
    return JoinDataSpec(**values)


def generated_topics(data: JoinDataSpec) -> tuple[str, str]:
    """The left and right topic of a generated data set, named after what defines it."""
    stall = "" if data.stall_partition is None else f"-stall{data.stall_partition}"
    base = f"join-{data.lefts}-m{int(data.match_ratio * 100)}-j{data.jump_max_ms}-s{data.seed}{stall}"
    return f"{base}-left", f"{base}-right"


def join_run_id(request: JoinRequest) -> str:
    """Stable per topics and join settings, so the same command resumes its checkpoint."""
    p = request.params
    return f"join.{request.topics[0]}.w{p.window_ms}.d{p.sync_delay_ms}.s{request.shards}"


def _total(client: KafkaClient, topic: str) -> int:
    return sum(end_offsets(client, topic).values()) if topic_exists(client, topic) else 0


def ensure_phase(request: JoinRequest, data: JoinData, phase: int,
                 progress: Callable[[int], None] | None = None) -> int:  # fmt: skip
    """Produce one phase unless the topics already hold it; returns messages produced.

    Topics that hold a later phase too hold this one: a run started again after
    it produced its last phase (killed in that phase's drain, say) goes on.
    """
    assert request.data is not None  # noqa: S101 - only generated data has phases
    records = data.records

    def through(last: int) -> list[int]:
        sides = records[records["phase"] <= last].groupby("side").size()
        return [int(sides.get(s, 0)) for s in (0, 1)]

    present = [_total(request.client, t) for t in request.topics]
    if any(present == through(later) for later in range(phase, data.phases)):
        logger.info("topics %s and %s already hold phase %d", *request.topics, phase, extra=RESULT)
        return 0
    if present != through(phase - 1):
        raise BrokerError(f"topics {request.topics} hold {present} messages, which matches no "
                          "phase of this data set (other data is there); use other --topics")  # fmt: skip
    return produce_phase(data.phase(phase), request.client, request.topics,
                         request.data.partitions, progress)  # fmt: skip


def start_join(spark: SparkSession, request: JoinRequest, warehouse: Warehouse,
               backend: TableBackend, trigger_s: float | None = None) -> StreamingQuery:  # fmt: skip
    """Start the join's streaming query, run id :func:`join_run_id`.

    Args:
        spark: the session.
        request: topics and settings.
        warehouse: where the tables and the checkpoint live.
        backend: the Delta backend.
        trigger_s: None: read what the topics hold now, then stop; otherwise keep
            joining what arrives, one micro-batch every ``trigger_s`` seconds.
    """
    run_id = join_run_id(request)
    cap = request.max_offsets_per_trigger
    topics = tuple(KafkaTopic(request.client, t, "earliest", cap) for t in request.topics)
    tables = {table[1]: warehouse.table_uri(*table) for table in (JOINED, JOIN_REJECTS, JOIN_STATE)}
    app_id = query_id(run_id, "join")
    land = (TaskLanding(warehouse.storage, tables, app_id)
            if backend.commits_task_files else None)  # fmt: skip
    rows = join_stream(spark, topics, request.params, request.shards, run_id, land)  # type: ignore[arg-type]
    writer = join_batch_writer(backend, tables, app_id)
    # Started as the grouping's stages are: a checkpoint a kill left without its first
    # batch is cleared first, or Spark refuses it ("should be empty on batch 0").
    stage = Stage("join", rows, writer, str(warehouse.checkpoint(app_id)))
    if trigger_s is None:
        return start_query(stage, availableNow=True)
    start_python_workers(spark)
    return start_query(stage, processingTime=f"{trigger_s} seconds")


def phase_messages(data: JoinData, phase: int) -> int:
    """Messages one phase produces: its lefts, their partners, its closing heartbeats."""
    return len(data.phase(phase))


def _drain(spark: SparkSession, request: JoinRequest, warehouse: Warehouse,
           backend: TableBackend) -> float:  # fmt: skip
    """Join what the topics hold now; returns the step's seconds."""
    held = sum(_total(request.client, topic) for topic in request.topics)
    with job_step(join_run_id(request), "join", total=held) as step, python_workers_starting(spark):
        query = start_join(spark, request, warehouse, backend)
        query.awaitTermination()
    for progress in query.recentProgress:
        phases = dict(progress.get("durationMs") or {})
        total_ms = phases.pop("triggerExecution", 0)
        slowest_first = dict(sorted(phases.items(), key=lambda item: -item[1]))
        logger.info("join batch %s: %s rows in %s ms (%s)", progress.get("batchId"),
                    figure(input_rows(progress)), figure(total_ms),
                    figures(slowest_first, "ms"))  # fmt: skip
    return step.seconds or 0.0


def run_join(spark: SparkSession, request: JoinRequest, warehouse: Warehouse,
             backend: TableBackend) -> JoinResult:  # fmt: skip
    """Produce (what is missing) and join every phase, then rebuild the join's gold table.

    Topics given as they are (no ``request.data``) are joined up to their end
    offsets at start, in one phase.
    """
    run_id = join_run_id(request)
    seconds, phase, phases = 0.0, 0, 1
    if request.data is None:
        seconds, phases = _drain(spark, request, warehouse, backend), 0
    while phase < phases:
        # Generated again per phase (it is deterministic) rather than held: a large data
        # set would otherwise sit in the driver's memory through every drain.
        data = generate(request.data)
        phases = data.phases
        with ProgressReporter(phase_messages(data, phase), unit="msg",
                              label=f"producing phase {phase + 1}/{phases}") as bar:  # fmt: skip
            ensure_phase(request, data, phase, bar.update_to)
        del data
        drained = _drain(spark, request, warehouse, backend)
        seconds += drained
        logger.info("join drained phase %d in %.1f s", phase, drained)
        phase += 1
    with job_step(run_id, "gold"):
        summary = refresh_join_gold(backend, warehouse, run_id, request.stats_window_ms)
    return JoinResult(run_id, summary, seconds)


def ground_truth_check(backend: TableBackend, warehouse: Warehouse, run_id: str,
                       spec: JoinDataSpec) -> dict[str, int]:  # fmt: skip
    """Compare ``silver.joined`` (deduplicated) with the generator's ground truth.

    Returns:
        ``missed``: true pairs not matched; ``false_unmatched``: lefts emitted
        unmatched although their partner exists; ``wrong_pairs``: matched rows
        whose right is not the true partner.
    """
    import pyarrow.compute as pc

    from gold.join_stats import dedup_joined

    data = generate(spec)
    table = backend.read(warehouse.table_uri(*JOINED))
    joined = dedup_joined(table.filter(pc.equal(table["run_id"], run_id)))
    matched = joined[joined["record"] == "matched"]
    unmatched = set(joined.loc[joined["record"] == "unmatched", "id"])
    truth = data.matches
    wrong = sum(truth.get(i) != r for i, r in zip(matched["id"], matched["right_created_ms"],
                                                  strict=True))  # fmt: skip
    return {"missed": len(set(truth) - set(matched["id"])),
            "false_unmatched": len(unmatched & set(truth)), "wrong_pairs": int(wrong)}  # fmt: skip
