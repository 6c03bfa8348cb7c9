"""The live benchmark's breakdown follows each message through checkpoints and Delta logs."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from bench.latency_breakdown import latency_breakdown, refreshed_windows_versions, routed_versions
from core.warehouse import Warehouse

RUN = "r"


@dataclass(frozen=True)
class _Refresh:  # what the breakdown reads of pipelines.continuous.GoldRefresh
    started_at: float
    finished_at: float
    windows_version: int | None


def _batch(warehouse: Warehouse, query: str, batch: int, end: dict, started: float,
           done: float) -> None:  # fmt: skip
    root = Path(warehouse.checkpoint(f"{RUN}-{query}"))
    for folder, text, at in (("offsets", f'v1\n{{"batchWatermarkMs":0}}\n{json.dumps(end)}', started),
                             ("commits", 'v1\n{"nextBatchWatermarkMs":0}', done)):  # fmt: skip
        path = root / folder / str(batch)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        os.utime(path, (at, at))


def _log(warehouse: Warehouse, layer: str, table: str, app_id: str, batches: int) -> None:
    """Version 0 creates the table; version n + 1 records batch n."""
    log = Path(warehouse.table_uri(layer, table), "_delta_log")
    log.mkdir(parents=True)
    (log / f"{0:020d}.json").write_text('{"commitInfo":{"operation":"CREATE TABLE"}}\n')
    for batch in range(batches):
        lines = ['{"commitInfo":{"operation":"WRITE"}}',
                 json.dumps({"txn": {"appId": app_id, "version": batch}}, separators=(",", ":"))]  # fmt: skip
        (log / f"{batch + 1:020d}.json").write_text("\n".join(lines) + "\n")


@pytest.fixture
def warehouse(tmp_path: Path) -> Warehouse:
    warehouse = Warehouse(tmp_path / "lake", state_dir=tmp_path / "state")
    # Bronze: two batches over partitions 0 and 1; each commits one bronze version.
    _batch(warehouse, "bronze", 0, {"0": 2, "1": 1}, 10.0, 11.0)
    _batch(warehouse, "bronze", 1, {"0": 4, "1": 2}, 12.0, 14.0)
    _log(warehouse, "bronze", "raw_events", f"{RUN}-bronze", 2)
    # Silver reads bronze versions 1, then 2; each batch commits one routed and one
    # worker windows version.
    _batch(warehouse, "silver", 0, {"version": 1}, 11.5, 13.0)
    _batch(warehouse, "silver", 1, {"version": 2}, 14.5, 16.0)
    _log(warehouse, "silver", "routed", f"{RUN}-silver", 2)
    _log(warehouse, "silver", "worker_windows", f"{RUN}-silver", 2)
    return warehouse


def test_segments_add_up_to_each_messages_path(warehouse: Warehouse) -> None:
    partition = np.array([0, 0, 0, 0, 1, 1])
    offset = np.array([0, 1, 2, 3, 0, 1])
    sent = np.array([9.0, 9.0, 11.0, 11.0, 9.0, 11.0])
    # The first refresh covers worker windows version 1 (silver batch 0), the second version 2.
    refreshes = [_Refresh(13.5, 13.8, 1), _Refresh(17.1, 17.6, 2)]
    result = latency_breakdown(warehouse, RUN, partition, offset, sent, refreshes)  # type: ignore[arg-type]
    # By hand: the first bronze batch's messages (sent at 9) and the second's (sent at 11).
    first = {"kafka": 1.0, "bronze": 1.0, "silver_wait": 0.5, "silver": 1.5, "gold_wait": 0.5,
             "gold": 0.3}  # fmt: skip
    second = {"kafka": 1.0, "bronze": 2.0, "silver_wait": 0.5, "silver": 1.5, "gold_wait": 1.1,
              "gold": 0.5}  # fmt: skip
    assert result["messages"] == 6
    assert list(result["segments_s"]) == list(first)
    for name in first:  # three messages took each path
        assert result["segments_s"][name]["mean"] == pytest.approx((first[name] + second[name]) / 2)
    mean = (sum(first.values()) + sum(second.values())) / 2
    assert result["mean_latency_s"] == pytest.approx(mean)
    assert result["batches"]["bronze"] == {"count": 2, "median_s": 1.5}
    assert result["batches"]["silver"] == {"count": 2, "median_s": 1.5}
    assert result["batches"]["gold"] == {"count": 2, "median_s": 0.4}


def test_a_silver_query_reading_kafka_has_no_bronze_segments(tmp_path: Path) -> None:
    warehouse = Warehouse(tmp_path / "lake", state_dir=tmp_path / "state")
    # Silver read Kafka itself: its batches end at Kafka offsets.
    _batch(warehouse, "silver", 0, {"0": 2, "1": 1}, 10.0, 12.0)
    _batch(warehouse, "silver", 1, {"0": 4, "1": 2}, 13.0, 14.0)
    _log(warehouse, "silver", "worker_windows", f"{RUN}-silver", 2)
    refreshes = [_Refresh(12.5, 12.75, 1), _Refresh(14.25, 14.75, 2)]
    result = latency_breakdown(warehouse, RUN, np.array([0, 1, 0]), np.array([1, 1, 3]),
                               np.array([9.0, 12.0, 12.0]), refreshes)  # type: ignore[arg-type]  # fmt: skip
    # By hand: offset 1 of partition 0 in batch 0; the others in batch 1.
    first = {"kafka": 1.0, "silver": 2.0, "gold_wait": 0.5, "gold": 0.25}
    second = {"kafka": 1.0, "silver": 1.0, "gold_wait": 0.25, "gold": 0.5}
    assert list(result["segments_s"]) == list(first)
    for name in first:
        expected = (first[name] + 2 * second[name]) / 3
        assert result["segments_s"][name]["mean"] == pytest.approx(expected, abs=0.005)
    assert result["batches"]["silver"] == {"count": 2, "median_s": 1.5}
    assert "bronze" not in result["batches"]


def test_a_message_no_batch_read_yet_is_not_followed(warehouse: Warehouse) -> None:
    # Bronze read partition 0 up to offset 4 (exclusive): offset 4 never left Kafka.
    result = latency_breakdown(warehouse, RUN, np.array([0, 0]), np.array([0, 4]),
                               np.array([9.0, 11.0]), [_Refresh(17.1, 17.6, 2)])  # type: ignore[arg-type]  # fmt: skip
    assert result["messages"] == 1
    assert result["segments_s"]["gold_wait"]["mean"] == pytest.approx(17.1 - 13.0)


def test_a_message_past_the_last_refresh_is_not_followed(warehouse: Warehouse) -> None:
    # The only refresh covered worker windows version 1: the second bronze batch's
    # message is not in gold.
    result = latency_breakdown(warehouse, RUN, np.array([1, 1]), np.array([0, 1]),
                               np.array([9.0, 11.0]), [_Refresh(13.5, 13.8, 1)])  # type: ignore[arg-type]  # fmt: skip
    assert result["messages"] == 1
    assert result["mean_latency_s"] == pytest.approx(13.8 - 9.0)


def test_refreshes_cover_what_their_worker_windows_version_holds(warehouse: Warehouse) -> None:
    # gold's refreshes record the run's last silver batch they hold: 0, then 1. Worker
    # windows version n + 1 committed silver batch n.
    log = Path(warehouse.table_uri("gold", "distribution_metrics"), "_delta_log")
    log.mkdir(parents=True)
    for version, built_from in enumerate([0, 1]):
        txn = {"txn": {"appId": f"gold-refresh-{RUN}", "version": built_from}}
        (log / f"{version:020d}.json").write_text(json.dumps(txn) + "\n")
    assert refreshed_windows_versions(warehouse, RUN) == [1, 2]
    # Worker windows version n + 1 holds silver batch n, as routed version n + 1 does.
    assert routed_versions(warehouse, RUN, [0, 1, 2]) == [-1, 1, 2]
