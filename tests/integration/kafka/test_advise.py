"""`dkg advise` against the embedded broker: the pick, read-only sampling, errors.

The expected figures come from the dataset's definition (ZIPF: 10,000 keys,
exponent 1.4, 2,000 messages per second of event time), not from the code.
"""

from __future__ import annotations

import json
import time

import numpy as np
import pytest
from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import AdminClient

from bronze.datasets.base import DatasetSpec
from bronze.datasets.registry import make_dataset
from bronze.producer import produce
from core.kafka.admin import ensure_topic
from pipelines.cli import main

pytestmark = pytest.mark.slow

TOPIC = "advise-zipf"  # not a generated topic's name: the format is told by the messages
MESSAGES = 60_000
# ZIPF's hottest key: 1 / sum(k^-1.4, k = 1..10,000).
TOP_SHARE = 1.0 / float((np.arange(1, 10_001, dtype=float) ** -1.4).sum())


@pytest.fixture(scope="module")
def zipf_topic(kafka) -> str:
    spec = DatasetSpec(name="ZIPF", messages=MESSAGES, rate=2000, seed=42)
    assert produce(make_dataset(spec), kafka, TOPIC, 4) == MESSAGES
    return TOPIC


def _topics(bootstrap: str) -> set[str]:
    return set(AdminClient({"bootstrap.servers": bootstrap}).list_topics(timeout=10).topics)


def _groups(bootstrap: str) -> set[str]:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    return {g.group_id for g in admin.list_consumer_groups(request_timeout=10).result().valid}


def _committed(bootstrap: str, group: str, topic: str) -> list[int]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "log_level": 3})
    try:
        return [tp.offset for tp in consumer.committed(
            [TopicPartition(topic, p) for p in range(4)], timeout=10)]  # fmt: skip
    finally:
        consumer.close()


def _commit_as(bootstrap: str, group: str, topic: str) -> None:
    """A consumer that does commit: shows the checks below would see a commit."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "log_level": 3,
                         "enable.auto.commit": False})  # fmt: skip
    try:
        consumer.assign([TopicPartition(topic, 1, 0)])
        consumer.consume(1, timeout=10)
        consumer.commit(offsets=[TopicPartition(topic, 1, 1)], asynchronous=False)
    finally:
        consumer.close()


def test_advise_splits_zipf_and_leaves_the_cluster_as_it_was(bootstrap, zipf_topic, capsys):
    topics, groups = _topics(bootstrap), _groups(bootstrap)
    argv = ["advise", "--topic", zipf_topic, "--bootstrap-servers", bootstrap, "--workers", "10",
            "--load", "0.8", "--max-messages", "20000", "--json"]  # fmt: skip
    assert main(argv) == 0
    advice = json.loads(capsys.readouterr().out)

    pick = advice["recommendation"]
    assert pick["grouping"] not in {"KEY", "SHUFFLE"}  # the top key is 3x a worker's share
    assert pick["figures"]["saturation_load"] > 0.95
    key = next(p for p in advice["grid"] if p["grouping"] == "KEY")
    assert key["saturation_load"] <= 1 / (10 * TOP_SHARE) + 0.02  # its worker carries p1 or more
    assert advice["profile"]["top_share"] == pytest.approx(TOP_SHARE, abs=0.015)
    assert advice["profile"]["top_keys"][0]["key"] == "key-1"
    assert advice["tuples_per_s"] == pytest.approx(2000, rel=0.01)
    assert advice["source"]["messages"] == 20_000
    assert advice["source"]["topic_messages"] == MESSAGES
    assert advice["source"]["format"] == "keyed-json"
    assert advice["command"] == (f"dkg run --format keyed-json --topic {zipf_topic} --grouping "
                                 f"{pick['grouping']} --workers 10 --load 0.8 "
                                 f"--bootstrap-servers {bootstrap}")  # fmt: skip

    # Read-only: no topic, no group, no committed offset.
    assert _topics(bootstrap) == topics
    assert _groups(bootstrap) == groups
    assert _committed(bootstrap, "dkg-advise", zipf_topic) == [-1001] * 4
    _commit_as(bootstrap, "advise-control", zipf_topic)
    assert "advise-control" in _groups(bootstrap)
    assert _committed(bootstrap, "advise-control", zipf_topic)[1] == 1


def _one_line_error(capsys, argv: list[str]) -> str:
    capsys.readouterr()  # what the test's own setup logged
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err + captured.out
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("dkg advise: error: "), captured.err
    return lines[0]


def test_a_missing_topic_is_an_error_and_is_not_created(bootstrap, capsys):
    err = _one_line_error(capsys, ["advise", "--topic", "no-such-topic",
                                   "--bootstrap-servers", bootstrap])  # fmt: skip
    assert "topic 'no-such-topic' does not exist" in err
    assert "no-such-topic" not in _topics(bootstrap)


def test_an_empty_topic_is_an_error(bootstrap, kafka, capsys):
    ensure_topic(kafka, "advise-empty", 2)
    err = _one_line_error(capsys, ["advise", "--topic", "advise-empty",
                                   "--bootstrap-servers", bootstrap])  # fmt: skip
    assert "'advise-empty'" in err and "no messages" in err


def test_a_format_that_reads_nothing_is_an_error(bootstrap, zipf_topic, capsys):
    err = _one_line_error(capsys, ["advise", "--topic", zipf_topic, "--format", "pageviews",
                                   "--bootstrap-servers", bootstrap, "--max-messages", "2000"])  # fmt: skip
    assert "none of the 2,000 sampled messages" in err and "pageviews" in err
    assert "--format" in err


def test_sampling_stops_at_max_seconds(bootstrap, kafka, zipf_topic, capsys):
    from core.kafka.sample import sample_topic

    cut = sample_topic(kafka, zipf_topic, max_messages=MESSAGES, max_seconds=0.001)
    assert not cut.complete and cut.messages < MESSAGES
    whole = sample_topic(kafka, zipf_topic, max_messages=MESSAGES)
    assert whole.complete and whole.messages == MESSAGES  # a topic under the limit is read whole
    err = _one_line_error(capsys, ["advise", "--topic", zipf_topic, "--bootstrap-servers",
                                   bootstrap, "--max-seconds", "0.001"])  # fmt: skip
    assert "read no message" in err and "--max-seconds 0.001" in err


def test_an_unreachable_broker_is_a_quick_error(capsys):
    from core.kafka.broker import free_port

    started = time.monotonic()
    err = _one_line_error(capsys, ["advise", "--topic", "t", "--bootstrap-servers",
                                   f"127.0.0.1:{free_port()}"])  # fmt: skip
    assert "cannot reach Kafka" in err
    assert time.monotonic() - started < 10
