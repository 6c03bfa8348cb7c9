"""``silver.routed`` as stored equals the grouping engine's routing, for every grouping.

One ``dkg run --grouping all`` (a process, as a user runs it) drains a skewed
topic of the real broker through the whole job, once per grouping. The oracle
is the pure-Python engine that ``dkg simulate`` uses, fed the topic's messages
as a consumer reads them: a splitter routes its partition's tuples in
(offset, tuple index) order, batch after batch, restoring its state from the
previous batch's snapshot, so its routing must equal one engine that routed the
whole partition in one call and never stopped.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections import Counter

import numpy as np
import pandas as pd
import pytest
from kafka import KafkaConsumer, TopicPartition

from core.config import load_settings
from core.tables import DeltaRsBackend
from core.warehouse import Warehouse
from silver.groupings.registry import GROUPING_NAMES, make_grouping

# 3,000 ZIPF messages over 200 keys at 15 messages/s of event time: 200 s, long
# enough for every grouping's warm-up, check and decision intervals to pass, and
# skewed enough that every grouping but KEY splits or moves keys. 1,000 offsets
# per bronze batch, a fair share per partition (the smallest holds ~420), and one
# bronze commit per silver batch: three micro-batches, every splitter routing in
# at least two, from the previous one's snapshot. Each grouping is a whole run
# (bronze, silver, workers, gold), so the topic stays small: the job took 151-204 s
# on two cores shared with other jobs (load average ~7). Quality gates are
# skipped: they read the tables, they do not change the routing.
MESSAGES = 3000
PARTITIONS = 3
WORKERS = 4
DATASET = ["--source", "ZIPF", "--messages", str(MESSAGES), "--keys", "200", "--rate", "15",
           "--seed", "7"]  # fmt: skip
_JOB_TIMEOUT_S = 480  # about 90 s on an idle 2-core machine
pytestmark = [pytest.mark.slow, pytest.mark.timeout(_JOB_TIMEOUT_S + 90)]
_CONSUME_TIMEOUT_S = 60


def _run_job(bootstrap: str, topic: str, warehouse: Warehouse) -> None:
    command = [sys.executable, "-m", "pipelines.cli", "run", "--bootstrap-servers", bootstrap,
               "--profile", "local", "--topic", topic, *DATASET, "--grouping", "all",
               "--workers", str(WORKERS), "--partitions", str(PARTITIONS),
               "--max-offsets-per-trigger", "1000", "--skip-checks",
               "--warehouse", str(warehouse.root)]  # fmt: skip
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "DKG_RUN__SILVER_MAX_BYTES_PER_TRIGGER": "1"}
    finished = subprocess.run(command, env=env, capture_output=True, text=True,  # noqa: S603
                              timeout=_JOB_TIMEOUT_S, check=False)  # fmt: skip
    assert finished.returncode == 0, finished.stderr[-3000:]


def _topic(bootstrap: str, topic: str) -> pd.DataFrame:
    """Every message of the topic as a consumer reads it: partition, offset, key, event time."""
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    parts = [TopicPartition(topic, p) for p in range(PARTITIONS)]
    consumer.assign(parts)
    consumer.seek_to_beginning(*parts)
    records = []
    deadline = time.monotonic() + _CONSUME_TIMEOUT_S
    try:
        while len(records) < MESSAGES:
            if time.monotonic() > deadline:
                pytest.fail(f"read {len(records)} of {MESSAGES} messages of {topic} "
                            f"within {_CONSUME_TIMEOUT_S} s")  # fmt: skip
            for batch in consumer.poll(timeout_ms=500).values():
                records.extend(batch)
    finally:
        consumer.close()
    rows = []
    for record in records:
        message = json.loads(record.value)  # keyed JSON: one tuple per message
        assert message["timestamp"] == record.timestamp
        rows.append((record.partition, record.offset, message["key"], message["timestamp"]))
    frame = pd.DataFrame(rows, columns=["partition", "offset", "key", "event_time_ms"])
    return frame.sort_values(["partition", "offset"], ignore_index=True)


def _engine_routing(name: str, messages: pd.DataFrame) -> np.ndarray:
    """Each partition's tuples through one engine that never stopped, in offset order."""
    params = load_settings(env={}).settings.grouping_params(name)
    workers = np.empty(len(messages), dtype=np.int64)
    for _, rows in messages.groupby("partition", sort=True):
        engine = make_grouping(name, WORKERS, params)
        workers[rows.index] = engine.route(rows["key"].to_numpy(object),
                                           rows["event_time_ms"].to_numpy(np.int64))  # fmt: skip
    return workers


def _first_difference(stored: pd.DataFrame, expected: np.ndarray) -> str:
    wrong = np.flatnonzero(stored["worker"].to_numpy() != expected)
    row = stored.iloc[wrong[0]]
    return (f"{len(wrong)} of {len(stored)} tuples on another worker; first: partition "
            f"{row['partition']} offset {row['offset']} key {row['key']!r}: stored worker "
            f"{row['worker']}, engine {expected[wrong[0]]}")  # fmt: skip


def test_silver_routed_equals_the_engine_for_every_grouping(bootstrap, tmp_path):
    warehouse = Warehouse(tmp_path / "lakehouse")
    topic = "all-groupings"
    _run_job(bootstrap, topic, warehouse)

    messages = _topic(bootstrap, topic)
    assert len(messages) == MESSAGES
    backend = DeltaRsBackend()
    runs = backend.read(warehouse.table_uri("gold", "runs")).to_pandas()
    assert sorted(runs["grouping"]) == sorted(GROUPING_NAMES)
    assert (runs["status"] == "succeeded").all()
    routed = backend.read(warehouse.table_uri("silver", "routed")).to_pandas()
    snapshots = backend.read(warehouse.table_uri("silver", "routing_snapshots")).to_pandas()

    for run_id, name in zip(runs["run_id"], runs["grouping"], strict=True):
        stored = routed[routed["run_id"] == run_id].sort_values(
            ["partition", "offset", "tuple_index"], ignore_index=True)
        assert len(stored) == MESSAGES, name
        assert (stored["splitter"] == stored["partition"]).all(), name  # one per partition
        assert (stored["tuple_index"] == 0).all(), name
        same = stored[messages.columns].astype(messages.dtypes.to_dict())
        pd.testing.assert_frame_equal(same, messages, obj=name)  # every message, once
        batches = snapshots[snapshots["run_id"] == run_id].groupby("splitter").size()
        assert len(batches) == PARTITIONS and batches.min() >= 2, (name, batches.to_dict())

        expected = _engine_routing(name, messages)
        assert (stored["worker"].to_numpy() == expected).all(), (
            f"{name}: {_first_difference(stored, expected)}")
        assert stored.groupby("key")["count"].sum().to_dict() == Counter(messages["key"]), name
        engine_pairs = Counter(zip(messages["key"], expected.tolist(), strict=True))
        stored_pairs = Counter(zip(stored["key"], stored["worker"].tolist(), strict=True))
        assert stored_pairs == engine_pairs, name
        workers_per_key = stored.groupby("key")["worker"].nunique()
        if name == "KEY":
            assert workers_per_key.max() == 1
        else:  # the skew is enough for every other grouping to split or move a key
            assert workers_per_key.max() > 1, name
