"""The pipeline benchmark's peers count a real topic exactly as the generator does."""

from __future__ import annotations

import pytest

from bench.peers import quix, spark_job
from bench.peers.oracle import check, expected_counts
from bronze.datasets.base import DatasetSpec
from bronze.datasets.registry import make_dataset
from bronze.producer import produce
from core.kafka.source import KafkaTopic

# 10 messages/s for 300 s from mid-minute: six windows, the first and last partial.
SPEC = DatasetSpec(
    name="ZIPF", messages=3_000, rate=10, keys=50, start_ms=DatasetSpec().start_ms + 30_000
)
TOPIC = "bench-peers"


@pytest.fixture(scope="module")
def topic(kafka):
    produce(make_dataset(SPEC), kafka, TOPIC, 2)
    return TOPIC


@pytest.mark.spark
@pytest.mark.slow
def test_the_spark_peer_counts_what_the_generator_made(spark, kafka, topic, tmp_path):
    # Two micro-batches: windows span both, so the upserts must carry running counts.
    source = KafkaTopic(kafka, topic, max_offsets_per_trigger=1_500)
    counts = spark_job.count_windows(spark, source, tmp_path / "counts", tmp_path / "checkpoint",
                                     timeout_s=120)  # fmt: skip
    assert check(counts, expected_counts(SPEC))["correct"]


@pytest.mark.slow
@pytest.mark.skipif(not quix.PEERS_PYTHON.exists(), reason="quix-streams lives in a virtualenv "
                    "of its own (scripts/setup-peers.sh; it caps confluent-kafka below the "
                    "project's pin), which the test setup does not install")  # fmt: skip
def test_the_quix_peer_counts_what_the_generator_made(kafka, topic, tmp_path):
    run = quix.count_windows(str(quix.PEERS_PYTHON), kafka, topic, SPEC.messages, tmp_path,
                             timeout_s=120)  # fmt: skip
    assert check(run.counts, expected_counts(SPEC))["correct"]
