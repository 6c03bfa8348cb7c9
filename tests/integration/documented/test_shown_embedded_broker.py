"""The embedded broker's commands, and every grouping over one topic, as the pages show them.

``dkg kafka up`` starts the broker the later commands use: ``dkg produce`` fills a
topic, the two ``dkg run --grouping all`` lines of the pages route a skewed
topic through the whole job once per grouping, and ``dkg kafka down`` stops it.

The routing oracle is the pure-Python engine that ``dkg simulate`` uses, fed the
topic's messages as a consumer reads them: a splitter routes its partition's
tuples in (offset, tuple index) order, batch after batch, restoring its state
from the previous batch's snapshot, so its routing must equal one engine that
routed the whole partition in one call and never stopped. 3,000 COUNTRY_SKEW_R80
messages at 60 messages/s of event time span 50 s, long enough for every
grouping's warm-up and decision intervals, and skewed enough that every grouping
but KEY splits or moves keys. Kafka's partitioner puts the hot country (80 % of
the messages) in one partition; with 1,000 offsets per bronze batch and one
bronze commit per silver batch, that partition's splitter routes in three
micro-batches, each from the previous one's snapshot (the other partitions fit
in one). Quality gates are off: they read the tables, they do not change the
routing.
"""

from __future__ import annotations

import json
import socket
import time
from collections import Counter

import numpy as np
import pandas as pd
import pytest
from kafka import KafkaConsumer, TopicPartition

from core.config import load_settings
from silver.groupings.registry import GROUPING_NAMES, make_grouping
from tests.exact_counts import gold_counts
from tests.integration.documented.shown import (
    Scenario,
    read_table,
    text_rows,
)

# Seven whole runs of three micro-batches each, then their resumption: about 3 min on two
# idle cores; 15 min seen on two cores with a load average of 20.
pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.timeout(1500)]

MESSAGES, PARTITIONS, WORKERS = 3000, 5, 20
ENV = {"DKG_DATASET__MESSAGES": str(MESSAGES), "DKG_DATASET__RATE": "60",
       "DKG_RUN__QUALITY_GATES": "false", "DKG_RUN__BRONZE_MAX_OFFSETS_PER_TRIGGER": "1000",
       "DKG_RUN__SILVER_MAX_BYTES_PER_TRIGGER": "1"}  # fmt: skip
TWEETS = 50_000

UP = ".venv/bin/dkg kafka up"
STATUS = ".venv/bin/dkg kafka status"
DOWN = ".venv/bin/dkg kafka down"
PRODUCE = (
    ".venv/bin/dkg produce --dataset TWITTER_TICKER --messages 50000 --topic tweets --partitions 4"
)
ALL_ON_FIVE = (".venv/bin/dkg run --dataset COUNTRY_SKEW_R80 --grouping all --workers 20 "
               "--partitions 5 --speed x10")  # fmt: skip
ALL = ".venv/bin/dkg run --dataset COUNTRY_SKEW_R80 --grouping all --workers 20 --speed x10"
COMMANDS = (UP, STATUS, PRODUCE, ALL_ON_FIVE, ALL, DOWN)
_CONSUME_TIMEOUT_S = 60


def _read_topic(bootstrap: str, topic: str, expected: int) -> pd.DataFrame:
    """Every message as a consumer reads it: partition, offset, key, event time."""
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    parts = [TopicPartition(topic, p) for p in sorted(consumer.partitions_for_topic(topic) or ())]
    consumer.assign(parts)
    consumer.seek_to_beginning(*parts)
    records = []
    deadline = time.monotonic() + _CONSUME_TIMEOUT_S
    try:
        while len(records) < expected:
            if time.monotonic() > deadline:
                pytest.fail(f"read {len(records)} of {expected} messages of {topic} "
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


def _end_offsets(bootstrap: str, topic: str) -> dict[int, int]:
    consumer = KafkaConsumer(bootstrap_servers=bootstrap)
    try:
        parts = [TopicPartition(topic, p) for p in consumer.partitions_for_topic(topic) or ()]
        return {tp.partition: end for tp, end in consumer.end_offsets(parts).items()}
    finally:
        consumer.close()


@pytest.fixture(scope="module")
def embedded(spark, tmp_path_factory) -> Scenario:
    folder = tmp_path_factory.mktemp("embedded-broker")
    scenario = Scenario(folder, {**ENV, "DKG_KAFKA__EMBEDDED__RUN_DIR": str(folder / "kafka")})
    try:
        up = scenario.run(UP)
        scenario.names["bootstrap"] = up.out.split()[3] if up.code == 0 else ""
        for command in (STATUS, PRODUCE, ALL_ON_FIVE, ALL):
            scenario.run(command)
        # Read while the broker still runs: what the producer and the job left in it.
        bootstrap = scenario.names["bootstrap"]
        scenario.seen["tweets"] = _end_offsets(bootstrap, "tweets")
        topic = read_table(folder / "lakehouse" / "gold" / "runs")["topic"].iloc[0]
        scenario.seen["topic"] = _read_topic(bootstrap, topic, MESSAGES)
    finally:
        scenario.run(DOWN)
        scenario.run(STATUS)
    return scenario


def _answers(bootstrap: str) -> bool:
    host, port = bootstrap.rsplit(":", 1)
    try:
        with socket.create_connection((host, int(port)), timeout=2):
            return True
    except OSError:
        return False


def test_kafka_up_status_and_down(embedded):
    up, (running, stopped), down = embedded.last(UP), embedded.done[STATUS], embedded.last(DOWN)
    bootstrap = embedded.names["bootstrap"]
    assert up.code == 0 and up.out.startswith("kafka running at 127.0.0.1:"), up
    assert running.code == 0 and running.out.startswith(f"kafka running at {bootstrap} (pid "), (
        running
    )
    assert down.code == 0 and down.out.strip() == "kafka stopped", down  # the runs left it up
    assert stopped.code == 1 and stopped.out.strip() == "kafka not running", stopped
    assert not _answers(bootstrap)


def test_produce_writes_the_messages_into_the_partitions(embedded):
    done = embedded.last(PRODUCE)
    assert done.code == 0, done
    assert done.out.strip().endswith(f"to tweets at {embedded.names['bootstrap']}")  # kafka up's
    ends = embedded.seen["tweets"]
    assert len(ends) == 4 and sum(ends.values()) == TWEETS and min(ends.values()) > 0, ends


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


def test_every_grouping_routes_as_the_engine_does(embedded):
    done = embedded.last(ALL_ON_FIVE)
    assert done.code == 0, done
    messages = embedded.seen["topic"]
    assert len(messages) == MESSAGES and messages["partition"].nunique() == PARTITIONS
    root = embedded.folder / "lakehouse"
    runs = read_table(root / "gold" / "runs")
    assert sorted(runs["grouping"]) == sorted(GROUPING_NAMES)
    assert (runs["status"] == "succeeded").all() and (runs["workers"] == WORKERS).all()
    routed = read_table(root / "silver" / "routed")
    snapshots = read_table(root / "silver" / "routing_snapshots")

    for run_id, name in zip(runs["run_id"], runs["grouping"], strict=True):
        stored = routed[routed["run_id"] == run_id].sort_values(
            ["partition", "offset", "tuple_index"], ignore_index=True
        )
        assert len(stored) == MESSAGES, name
        assert (stored["splitter"] == stored["partition"]).all(), name  # one per partition
        assert (stored["tuple_index"] == 0).all(), name
        same = stored[messages.columns].astype(messages.dtypes.to_dict())
        pd.testing.assert_frame_equal(same, messages, obj=name)  # every message, once
        batches = snapshots[snapshots["run_id"] == run_id].groupby("splitter").size()
        assert len(batches) == PARTITIONS and batches.max() >= 2, (name, batches.to_dict())

        expected = _engine_routing(name, messages)
        assert (stored["worker"].to_numpy() == expected).all(), (
            f"{name}: {_first_difference(stored, expected)}"
        )
        assert stored.groupby("key")["count"].sum().to_dict() == Counter(messages["key"]), name
        engine_pairs = Counter(zip(messages["key"], expected.tolist(), strict=True))
        stored_pairs = Counter(zip(stored["key"], stored["worker"].tolist(), strict=True))
        assert stored_pairs == engine_pairs, name
        workers_per_key = stored.groupby("key")["worker"].nunique()
        if name == "KEY":
            assert workers_per_key.max() == 1
        else:  # the skew is enough for every other grouping to split or move a key
            assert workers_per_key.max() > 1, name


def test_the_same_runs_without_partitions_resume_on_the_topic_there(embedded):
    # The topic holds the dataset already (five partitions): the runs are the same
    # runs, resumed from their checkpoints, and gold still counts every message once.
    done = embedded.last(ALL)
    assert done.code == 0, done
    root = embedded.folder / "lakehouse"
    runs = read_table(root / "gold" / "runs")
    assert len(runs) == len(GROUPING_NAMES) and (runs["splitters"] == PARTITIONS).all()
    assert sorted(r["grouping"] for r in text_rows(done.out)) == sorted(runs["label"])
    expected = Counter(embedded.seen["topic"]["key"])  # one tuple per message
    assert all(counts == expected for counts in gold_counts(root).values())
