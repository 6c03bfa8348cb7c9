"""The micro-batch split read from an event log written by hand, with its figures worked out here."""

from __future__ import annotations

import json
from pathlib import Path

from bench.micro_batches import micro_batch_parts

_PROGRESS = "org.apache.spark.sql.streaming.StreamingQueryListener$QueryProgressEvent"
_STARTED = "org.apache.spark.sql.streaming.StreamingQueryListener$QueryStartedEvent"


def _scope(name: str) -> dict[str, str]:
    return {"Name": "MapPartitionsRDD", "Scope": json.dumps({"id": "1", "name": name})}


def _batch(query: str, batch: int, job: int, at: int, add_batch: int,
           stages: list[tuple[int, str, list[tuple[int, int]]]]) -> list[dict]:  # fmt: skip
    """A batch's progress and one job; each stage: id, operator, tasks as (wall, JVM CPU) ms."""
    props = {"sql.streaming.queryId": query, "streaming.sql.batchId": str(batch)}
    events = [{"Event": "SparkListenerJobStart", "Job ID": job, "Submission Time": at,
               "Stage IDs": [s for s, _, _ in stages], "Properties": props}]  # fmt: skip
    clock = at
    for stage, operator, tasks in stages:
        longest = max(wall for wall, _ in tasks)
        events.append({"Event": "SparkListenerStageCompleted", "Stage Info": {
            "Stage ID": stage, "Stage Name": "call at x", "Submission Time": clock,
            "Completion Time": clock + longest, "RDD Info": [_scope("Exchange"), _scope(operator)]}})  # fmt: skip
        events += [{"Event": "SparkListenerTaskEnd", "Stage ID": stage,
                    "Task Info": {"Launch Time": clock, "Finish Time": clock + wall},
                    "Task Metrics": {"Executor CPU Time": cpu * 1_000_000,
                                     "Executor Deserialize Time": 2}} for wall, cpu in tasks]  # fmt: skip
        clock += longest
    events.append({"Event": "SparkListenerJobEnd", "Job ID": job, "Completion Time": clock})
    events.append({"Event": _PROGRESS, "progress": {
        "id": query, "name": "silver", "batchId": batch,
        "durationMs": {"triggerExecution": add_batch + 50, "addBatch": add_batch, "queryPlanning": 50}}})  # fmt: skip
    return events


def test_each_stage_and_the_driver_outside_the_jobs(tmp_path: Path) -> None:
    events = [{"Event": _STARTED, "id": "q1", "name": "silver"},
              {"Event": _STARTED, "id": "other", "name": "bronze"}]  # fmt: skip
    # Batch 0 is the warm-up, left out; batches 1-3 count.
    for batch, (read, route, add_batch) in enumerate([(900, 900, 5000), (100, 200, 400),
                                                      (120, 260, 500), (140, 220, 460)]):  # fmt: skip
        events += _batch("q1", batch, batch, 10_000 * batch, add_batch, [
            (10 * batch, "MicroBatchScan", [(read, 30), (read // 2, 10)]),
            (10 * batch + 1, "FlatMapGroupsInPandasWithState", [(route, 50)]),
        ])
    # Another query's batch with the same id must not count.
    events += _batch("other", 1, 99, 500_000, 9999, [(999, "MicroBatchScan", [(5000, 1)])])
    log = tmp_path / "eventlog_v2_app"
    log.mkdir()
    (log / "events_1_app").write_text("\n".join(json.dumps(e) for e in events) + "\n")

    (run,) = micro_batch_parts(tmp_path, "silver")

    assert run["batches"] == 3
    # Jobs per batch: 300, 380, 360 ms; addBatch 400, 500, 460.
    assert run["median_ms"]["jobs"] == 360
    assert run["median_ms"]["addBatch"] == 460
    assert run["median_ms"]["addBatch outside jobs"] == 100
    read = run["stages"]["read"]
    assert read["wall_ms"] == 120
    assert read["tasks"] == 2
    assert read["task_wall_ms"] == (70 + 100) / 2  # of 50, 60, 70, 100, 120, 140
    assert read["slowest_task_ms"] == 120  # of 100, 120, 140
    assert read["task_jvm_cpu_ms"] == 20
    route = run["stages"]["applyInPandasWithState"]
    assert (route["wall_ms"], route["tasks"], route["task_jvm_cpu_ms"]) == (220, 1, 50)
