"""Reading the embedded broker's snapshot file, and waiting for it, without a broker."""

from __future__ import annotations

import json

import pytest

from core.kafka.admin import BrokerError
from core.kafka.broker import LocalBroker
from core.kafka.client import KafkaClient
from core.kafka.producer import confirm_saved, held_before
from core.kafka.saved import SNAPSHOT_FILE, SnapshotFormatError, saved_end_offsets


def _partition(pid: int, end: int) -> list:
    # Laid out as noida-db 0.2.3 saves it: message bytes as arrays of numbers.
    batches = [[offset, [0, 34, 104, 105, 103, 104, 34, 125]] for offset in range(end)]
    return [pid, {"id": pid, "leader": 1, "record_batches": batches, "high_watermark": end,
                  "producer_seqs": [], "log_start_offset": 0, "segments": []}]  # fmt: skip


def _snapshot(path, topics: dict[str, dict[int, int]]) -> None:
    entries = [[name, {"name": name, "is_internal": False,
                       "partitions": [_partition(p, e) for p, e in ends.items()],
                       "configs": {"retention.ms": "-1"}}]
               for name, ends in topics.items()]  # fmt: skip
    path.mkdir(parents=True, exist_ok=True)
    (path / SNAPSHOT_FILE).write_text(json.dumps({"topics": entries, "broker_id": 1},
                                                 separators=(",", ":")))  # fmt: skip


def test_end_offsets_per_topic_and_partition(tmp_path):
    _snapshot(tmp_path, {"a": {0: 3, 1: 0, 2: 12}, "a.b": {0: 7}, "b": {1: 2, 0: 5}})
    assert saved_end_offsets(tmp_path, "a") == {0: 3, 1: 0, 2: 12}
    assert saved_end_offsets(tmp_path, "a.b") == {0: 7}
    assert saved_end_offsets(tmp_path, "b") == {0: 5, 1: 2}
    assert saved_end_offsets(tmp_path, "c") is None


def test_no_snapshot_yet(tmp_path):
    assert saved_end_offsets(tmp_path, "a") is None
    (tmp_path / SNAPSHOT_FILE).write_bytes(b"")
    assert saved_end_offsets(tmp_path, "a") is None


def test_another_layout_is_an_error(tmp_path):
    (tmp_path / SNAPSHOT_FILE).write_text('{"topics":[["a",{"name":"a","is_internal":false}]]}')
    with pytest.raises(SnapshotFormatError, match="no end"):
        saved_end_offsets(tmp_path, "a")


def test_wait_returns_once_saved(tmp_path):
    _snapshot(tmp_path / "data", {"t": {0: 4, 1: 9}})
    assert LocalBroker(tmp_path).wait_saved({"t": {0: 4, 1: 9}}, timeout_s=1) < 1


def test_a_stopped_broker_that_did_not_save_is_one_line(tmp_path):
    _snapshot(tmp_path / "data", {"t": {0: 4, 1: 3}})
    with pytest.raises(BrokerError, match=r"stopped before it saved t\[1\] up to offset 9 \(saved: 3\)"):
        LocalBroker(tmp_path).wait_saved({"t": {0: 4, 1: 9}}, timeout_s=1)


def test_a_users_kafka_is_never_asked(tmp_path):
    users = KafkaClient("127.0.0.1:1")  # nothing listens: any request would fail
    assert held_before(users, ("t",)) is None
    confirm_saved(users, ("t",), None, 10)
