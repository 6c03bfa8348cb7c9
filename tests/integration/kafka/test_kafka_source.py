"""The Spark Python data source reads exactly the topic, once, across restarts."""

from __future__ import annotations

import pytest

from bronze.datasets.base import DatasetSpec
from bronze.datasets.registry import make_dataset
from bronze.producer import produce
from core.kafka.admin import ensure_topic
from core.kafka.source import KafkaTopic, read_kafka_stream
from tests.integration.waiting import await_query

pytestmark = [pytest.mark.spark, pytest.mark.slow]


def _drain(spark, kafka, topic, checkpoint, cap=None):
    batches = []
    frame = read_kafka_stream(spark, KafkaTopic(kafka, topic, max_offsets_per_trigger=cap))
    query = (frame.writeStream.foreachBatch(lambda df, _: batches.append(df.toPandas()))
             .option("checkpointLocation", str(checkpoint)).trigger(availableNow=True).start())  # fmt: skip
    await_query(query)
    return batches


def test_every_message_exactly_once_and_only_new_ones_after_restart(spark, kafka, tmp_path):
    spec = DatasetSpec(name="TWITTER_TICKER", messages=1200, seed=2)
    produce(make_dataset(spec), kafka, "tweets", 3)
    first = _drain(spark, kafka, "tweets", tmp_path / "ckpt", cap=500)
    assert len(first) >= 3  # the cap split the backlog
    rows = [r for batch in first for r in batch.itertuples()]
    assert len(rows) == 1200
    for partition in {r.partition for r in rows}:
        offsets = sorted(r.offset for r in rows if r.partition == partition)
        assert offsets == list(range(len(offsets)))  # contiguous, none twice
    expected = next(make_dataset(spec).messages(batch_size=1200))
    assert sorted(bytes(r.value) for r in rows) == sorted(expected.payloads)  # byte-exact

    produce(make_dataset(DatasetSpec(name="TWITTER_TICKER", messages=300, seed=9)), kafka,
            "tweets", 3)  # fmt: skip
    second = _drain(spark, kafka, "tweets", tmp_path / "ckpt")
    assert sum(len(b) for b in second) == 300


def test_reads_a_partition_backlog_larger_than_a_fetch_response_limit(spark, kafka, tmp_path):
    # The local broker answers each fetch with the whole backlog past the offset:
    # 110 MB here, above librdkafka's default 100 MB response limit.
    from pyspark.sql import functions as F

    from core.kafka.producer import DeliveryErrors, open_producer, send

    failures = DeliveryErrors()
    producer = open_producer(kafka, "big-backlog", failures)
    ensure_topic(kafka, "big-backlog", 1)
    payload = b"x" * (1 << 19)  # the broker takes messages up to 1 MB
    for offset in range(220):
        send(producer, "big-backlog", None, payload, offset)
    assert producer.flush(60.0) == 0 and failures.first is None
    totals = []
    frame = read_kafka_stream(spark, KafkaTopic(kafka, "big-backlog"))
    query = (frame.writeStream
             .foreachBatch(lambda df, _: totals.append(df.agg(F.count("*"), F.sum(F.length("value"))).first()))
             .option("checkpointLocation", str(tmp_path / "ckpt")).trigger(availableNow=True).start())  # fmt: skip
    await_query(query, 300)
    assert [tuple(t) for t in totals] == [(220, 220 << 19)]
