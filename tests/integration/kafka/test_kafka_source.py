"""The Spark Python data source reads exactly the topic, once, across restarts."""

from __future__ import annotations

import pytest

from bronze.datasets.base import DatasetSpec
from bronze.datasets.registry import make_dataset
from bronze.producer import produce
from pipelines.core.kafka_source import read_kafka_stream

pytestmark = [pytest.mark.spark, pytest.mark.slow]


def _drain(spark, bootstrap, topic, checkpoint, cap=None):
    batches = []
    frame = read_kafka_stream(spark, bootstrap, topic, max_offsets_per_trigger=cap)
    query = (frame.writeStream.foreachBatch(lambda df, _: batches.append(df.toPandas()))
             .option("checkpointLocation", str(checkpoint)).trigger(availableNow=True).start())  # fmt: skip
    query.awaitTermination()
    return batches


def test_every_message_exactly_once_and_only_new_ones_after_restart(spark, bootstrap, tmp_path):
    spec = DatasetSpec(name="TWITTER_TICKER", messages=1200, seed=2)
    produce(make_dataset(spec), bootstrap, "tweets", 3)
    first = _drain(spark, bootstrap, "tweets", tmp_path / "ckpt", cap=500)
    assert len(first) >= 3  # the cap split the backlog
    rows = [r for batch in first for r in batch.itertuples()]
    assert len(rows) == 1200
    for partition in {r.partition for r in rows}:
        offsets = sorted(r.offset for r in rows if r.partition == partition)
        assert offsets == list(range(len(offsets)))  # contiguous, none twice
    expected = next(make_dataset(spec).messages(batch_size=1200))
    assert sorted(bytes(r.value) for r in rows) == sorted(expected.payloads)  # byte-exact

    produce(make_dataset(DatasetSpec(name="TWITTER_TICKER", messages=300, seed=9)), bootstrap,
            "tweets", 3)  # fmt: skip
    second = _drain(spark, bootstrap, "tweets", tmp_path / "ckpt")
    assert sum(len(b) for b in second) == 300
