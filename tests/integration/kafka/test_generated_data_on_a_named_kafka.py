"""Generated data on a Kafka named by its address stays there, and the job processes it.

The broker here is a Kafka-protocol broker of its own (not the embedded broker of
the settings), named with ``--bootstrap-servers`` as a user names theirs: the local
profile does not apply. Generated messages carry their event times (2026-01-01)
as Kafka timestamps; a topic with the broker's default time-based retention loses
them within seconds. The topic ``dkg produce`` creates keeps them, and ``dkg run
--format`` then counts every one, its queue model at the load of the topic's
sampled tuple rate.
"""

from __future__ import annotations

import time

import pytest
from confluent_kafka import Consumer, TopicPartition
from deltalake import DeltaTable

from bronze.datasets.base import DatasetSpec
from pipelines.cli import main
from tests.exact_counts import dataset_counts, gold_counts

pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.timeout(600)]

MESSAGES = 5000


def _watermarks(bootstrap: str, topic: str, partitions: int) -> list[tuple[int, int]]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "watermarks"})
    try:
        return [consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)
                for p in range(partitions)]  # fmt: skip
    finally:
        consumer.close()


def test_a_generated_topic_keeps_its_messages_and_the_job_counts_them(bootstrap, tmp_path,
                                                                       monkeypatch):  # fmt: skip
    monkeypatch.chdir(tmp_path)
    assert main(["produce", "--dataset", "ZIPF", "--messages", str(MESSAGES), "--topic", "t2",
                 "--partitions", "2", "--bootstrap-servers", bootstrap]) == 0  # fmt: skip
    time.sleep(6)  # long past what an expiring retention took to empty the topic
    marks = _watermarks(bootstrap, "t2", 2)
    assert [low for low, _ in marks] == [0, 0]
    assert sum(high for _, high in marks) == MESSAGES

    assert main(["run", "--format", "ZIPF", "--topic", "t2", "--bootstrap-servers", bootstrap,
                 "--grouping", "KEY", "--skip-checks", "--warehouse", str(tmp_path / "wh")]) == 0  # fmt: skip
    assert list(gold_counts(tmp_path / "wh").values()) == [dataset_counts([DatasetSpec(name="ZIPF", messages=MESSAGES)])]
    # The topic's rate came from a sample of it: 160 messages (one tuple each) per second of
    # event time, which a load of 0.8 over 10 workers of 1 ms turns into a speed-up of 50.
    run = DeltaTable(str(tmp_path / "wh" / "gold" / "runs")).to_pandas().iloc[0]
    assert run["load"] == 0.8
    assert run["speed"] == pytest.approx(0.8 * 10 * 1000 / (1.0 * 160), rel=2e-3)
