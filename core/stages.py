"""What a layer's streaming query is made of, and how the orchestration starts one.

Each layer builds its own stage (``bronze.stage``, ``silver.stage``) from the
same :class:`RunContext`; the orchestration (``pipelines.medallion``) only loops
over the stages in data-flow order.
"""

from __future__ import annotations

import json
import logging
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.kafka.source import KafkaTopic
from core.spark.proxies import releasing_proxies

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.streaming import StreamingQuery

    from core.run_plan import RunPlan
    from core.spark.foreach_batch import BatchWriter
    from core.tables.base import TableBackend
    from core.warehouse import Warehouse

__all__ = ["IN_MEMORY_STATE_STORE", "RunContext", "Stage", "StageDef", "recorded_shuffle_partitions",
           "start_query"]

logger = logging.getLogger(__name__)

_SHUFFLE_PARTITIONS = "spark.sql.shuffle.partitions"
_STATE_STORE = "spark.sql.streaming.stateStore.providerClass"

IN_MEMORY_STATE_STORE = "org.apache.spark.sql.execution.streaming.state.HDFSBackedStateStoreProvider"
"""Spark's default state store: versions kept on the JVM heap, each commit one delta file."""


@dataclass(frozen=True)
class RunContext:
    """Everything a stage builder may use.

    Attributes:
        spark: the session.
        source: what bronze reads: a Kafka topic, or any streaming DataFrame with
            Kafka's columns (tests and other sources plug in here).
        plan: the run.
        warehouse: where tables and checkpoints live.
        backend: the Delta backend.
        snapshot_every: micro-batches between two routing snapshots of a splitter
            (``silver.routing_snapshots``); a finite run records one after each.
    """

    spark: SparkSession
    source: DataFrame | KafkaTopic
    plan: RunPlan
    warehouse: Warehouse
    backend: TableBackend
    snapshot_every: int = 1

    def checkpoint(self, query: str) -> str:
        """The checkpoint folder of this run's ``query``."""
        return str(self.warehouse.checkpoint(self.plan.query_id(query)))

    @property
    def landed_topic(self) -> KafkaTopic | None:
        """The topic silver's read tasks land in bronze themselves, if they can; bronze then
        has no query of its own. They can with a Kafka topic and a backend whose tasks write
        files (:attr:`~core.tables.base.TableBackend.commits_task_files`)."""
        source = self.source
        return source if isinstance(source, KafkaTopic) and self.backend.commits_task_files else None


@dataclass(frozen=True)
class Stage:
    """One streaming query of a run: what it reads, how it writes, where it checkpoints.

    ``recorded`` says whether the tables the writer commits to record any of its
    micro-batches (their Delta transactions under its application id, e.g.
    :func:`~core.tables.sink.recorded_anywhere`); None: not known, the checkpoint is
    trusted as it is (see :func:`start_query`).
    """

    name: str
    frame: DataFrame
    writer: BatchWriter
    checkpoint: str
    shuffle_partitions: int | None = None  # None: the session's
    state_store: str | None = None  # the state store provider class; None: the session's
    recorded: Callable[[], bool] | None = None


@dataclass(frozen=True)
class StageDef:
    """A layer's stage: its query name, the table it writes (the next stage's input), its builder.

    ``build`` may assume that the previous stage's output table exists.
    """

    name: str
    output: tuple[str, str]
    build: Callable[[RunContext], Stage]


def _batch_ids(log: Path) -> list[int]:
    """The micro-batches a checkpoint's log (``offsets``, ``commits``) holds; none without it."""
    return [int(entry.name) for entry in log.iterdir() if entry.name.isdigit()] if log.is_dir() else []


def recorded_shuffle_partitions(checkpoint: str) -> int | None:
    """The shuffle partition count a stateful query's checkpoint fixed, which Spark resumes
    with whatever the session says; None before its first micro-batch."""
    offsets = Path(checkpoint) / "offsets"
    batches = _batch_ids(offsets)
    if not batches:
        return None
    # An offset file: a version line, then the batch's metadata with the query's conf.
    try:
        metadata = json.loads((offsets / str(max(batches))).read_text().splitlines()[1])
        return int(metadata["conf"][_SHUFFLE_PARTITIONS])
    except (IndexError, KeyError, TypeError, ValueError):
        return None  # not Spark's layout: Spark's own start says what is wrong with it


def _clear_unstarted(checkpoint: str) -> None:
    # SIGKILL while Spark writes a query's first offset leaves a temporary file and
    # no batch; Spark then refuses the checkpoint of a stateful query. No batch ran
    # (the offset is written before its batch), so there is nothing to keep.
    offsets = Path(checkpoint) / "offsets"
    if offsets.is_dir() and not _batch_ids(offsets):
        logger.info("checkpoint %s never recorded a batch: starting it afresh", checkpoint)
        shutil.rmtree(checkpoint)


def _clear_orphaned(stage: Stage) -> None:
    # A checkpoint says which offsets are done; the tables hold what was done with them.
    # Tables emptied or replaced behind a checkpoint kept elsewhere (a warehouse in
    # object storage keeps its checkpoints in a local state folder: a bucket deleted,
    # or an in-memory S3 server restarted) would have the query resume after offsets
    # whose rows are gone, and write nothing. When no table records any batch of the
    # query, nothing it did is left: starting afresh (the source from its start) loses
    # nothing, and no batch id is skipped as already written.
    commits = Path(stage.checkpoint) / "commits"
    if stage.recorded is None or not commits.is_dir():
        return
    if not _batch_ids(commits) or stage.recorded():
        return
    logger.warning("checkpoint %s has committed micro-batches that no table of its query "
                   "records (the tables were emptied or replaced): starting the query afresh",
                   stage.checkpoint)  # fmt: skip
    shutil.rmtree(stage.checkpoint)


def start_query(stage: Stage, **trigger: Any) -> StreamingQuery:
    """Start the stage's query with ``trigger`` (e.g. ``availableNow=True``).

    Its writer runs through :func:`~core.spark.proxies.releasing_proxies`, so the
    JVM does not keep the objects of past micro-batches. The shuffle partition
    count and the state store are fixed when a stateful query first starts (its
    checkpoint keeps them); a stage may ask for its own, set only for its start.
    A checkpoint whose committed micro-batches none of the stage's tables record
    (``Stage.recorded``) is dropped first, so the query starts afresh instead of
    resuming past rows that are gone.
    """
    _clear_unstarted(stage.checkpoint)
    _clear_orphaned(stage)
    spark = stage.frame.sparkSession
    asked = {_SHUFFLE_PARTITIONS: stage.shuffle_partitions, _STATE_STORE: stage.state_store}
    session = {key: spark.conf.get(key) for key, value in asked.items() if value}
    for key in session:
        spark.conf.set(key, str(asked[key]))
    try:
        writer = releasing_proxies(stage.writer)
        return (stage.frame.writeStream.queryName(stage.name).foreachBatch(writer)
                .option("checkpointLocation", stage.checkpoint).trigger(**trigger).start())  # fmt: skip
    finally:
        for key, value in session.items():
            spark.conf.set(key, value)
