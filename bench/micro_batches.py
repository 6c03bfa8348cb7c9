"""Where a streaming query's micro-batches spend their time, from Spark's event log.

Spark's progress splits a micro-batch into planning, its logs and the sink's work
(``addBatch``); the event log splits the sink's work further into its jobs'
stages and their tasks. Together they show the fixed cost under every batch
(the floor of a live run's latency), part by part: the driver's planning and
commits, and for each stage its tasks, how long each ran, and how much of that
the JVM's task thread spent on the CPU (the rest it waited, mostly on the Python
worker doing the stage's Python work).

Turn the log on with :func:`event_log_conf` when the session is built, and read
it with :func:`micro_batch_parts` once the session has stopped.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["event_log_conf", "micro_batch_parts"]

_PROGRESS = "org.apache.spark.sql.streaming.StreamingQueryListener$QueryProgressEvent"
_STARTED = "org.apache.spark.sql.streaming.StreamingQueryListener$QueryStartedEvent"
# A stage is named after the first operator of this list that its RDDs come from (a
# stage also holds the map side of the next shuffle), else after Spark's stage name.
_OPERATORS = {"FlatMapGroupsInPandasWithState": "applyInPandasWithState",
              "FlatMapGroupsInPandas": "applyInPandas", "MicroBatchScan": "read"}  # fmt: skip


def event_log_conf(directory: Path) -> dict[str, str]:
    """Spark settings that write the session's event log, uncompressed, under ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    return {"spark.eventLog.enabled": "true", "spark.eventLog.dir": directory.as_uri(),
            "spark.eventLog.compress": "false"}  # fmt: skip


def _events(directory: Path) -> Iterator[dict[str, Any]]:
    for path in sorted(p for p in directory.rglob("*") if p.is_file() and "appstatus" not in p.name):
        with path.open() as lines:
            yield from (json.loads(line) for line in lines)


def _stage_kind(info: dict[str, Any]) -> str:
    scopes = {json.loads(rdd["Scope"])["name"] for rdd in info["RDD Info"] if rdd.get("Scope")}
    for operator, kind in _OPERATORS.items():
        if operator in scopes:
            return kind
    return info["Stage Name"].split(" at ")[0]


def _median(values: list[float]) -> float:
    return round(float(np.median(values)), 1) if values else 0.0


def micro_batch_parts(directory: Path, query: str, skip_first: int = 1) -> list[dict[str, Any]]:
    """Per run of the query named ``query`` (in start order), the median micro-batch split into parts.

    Args:
        directory: the event log's directory (:func:`event_log_conf`).
        query: the streaming query's name.
        skip_first: batches left out at the start of each run (Python workers and
            code generation warming up).

    Returns:
        One dict per run: the batches counted, then per batch (medians, ms) Spark's
        progress phases, the jobs' wall time, the driver's share of ``addBatch``
        outside the jobs, and per stage kind its wall time, tasks, its slowest task's
        wall, and per task the wall, the JVM thread's CPU and deserialisation time.
    """
    runs: list[str] = []
    progress: dict[str, list[dict[str, Any]]] = defaultdict(list)
    jobs: dict[int, dict[str, Any]] = {}
    stages: dict[int, dict[str, Any]] = {}
    tasks: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for event in _events(directory):
        kind = event["Event"]
        if kind == _STARTED and event.get("name") == query:
            runs.append(event["id"])
        elif kind == _PROGRESS and event["progress"].get("name") == query:
            progress[event["progress"]["id"]].append(event["progress"])
        elif kind == "SparkListenerJobStart":
            jobs[event["Job ID"]] = event
        elif kind == "SparkListenerJobEnd":
            jobs[event["Job ID"]]["end"] = event["Completion Time"]
        elif kind == "SparkListenerStageCompleted":
            stages[event["Stage Info"]["Stage ID"]] = event["Stage Info"]
        elif kind == "SparkListenerTaskEnd":
            tasks[event["Stage ID"]].append(event)
    batch_jobs: dict[tuple[str, int], list[dict[str, Any]]] = defaultdict(list)
    for job in jobs.values():
        props = job.get("Properties", {})
        if "streaming.sql.batchId" in props and "end" in job:
            batch_jobs[(props["sql.streaming.queryId"], int(props["streaming.sql.batchId"]))].append(job)
    return [_run_parts(progress[run][skip_first:], batch_jobs, run, stages, tasks) for run in runs]


def _run_parts(batches: list[dict[str, Any]], batch_jobs: dict[tuple[str, int], list[dict[str, Any]]],
               run: str, stages: dict[int, dict[str, Any]],
               tasks: dict[int, list[dict[str, Any]]]) -> dict[str, Any]:  # fmt: skip
    phases: dict[str, list[float]] = defaultdict(list)
    per_stage: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for batch in batches:
        for phase, ms in batch["durationMs"].items():
            phases[phase].append(ms)
        own = batch_jobs.get((run, batch["batchId"]), [])
        jobs_ms = sum(job["end"] - job["Submission Time"] for job in own)
        phases["jobs"].append(jobs_ms)
        phases["addBatch outside jobs"].append(batch["durationMs"].get("addBatch", 0) - jobs_ms)
        for stage_id in (s for job in own for s in job["Stage IDs"] if s in stages):
            info, ran = stages[stage_id], tasks[stage_id]
            part = per_stage[_stage_kind(info)]
            part["wall_ms"].append(info["Completion Time"] - info["Submission Time"])
            part["tasks"].append(len(ran))
            # The stage waits for its slowest task: pooled task walls hide a skewed one.
            part["slowest_task_ms"].append(max((t["Task Info"]["Finish Time"] - t["Task Info"]["Launch Time"]
                                                for t in ran), default=0))  # fmt: skip
            for task in ran:
                metrics, timing = task["Task Metrics"], task["Task Info"]
                part["task_wall_ms"].append(timing["Finish Time"] - timing["Launch Time"])
                part["task_jvm_cpu_ms"].append(metrics["Executor CPU Time"] / 1e6)
                part["task_deserialize_ms"].append(metrics["Executor Deserialize Time"])
    return {"batches": len(batches),
            "median_ms": {phase: _median(values) for phase, values in phases.items()},
            "stages": {kind: {name: _median(values) for name, values in part.items()}
                       for kind, part in per_stage.items()}}  # fmt: skip
