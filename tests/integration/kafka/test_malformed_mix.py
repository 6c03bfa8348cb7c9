"""A hostile mix through a real topic and the whole pipeline: 1 % malformed messages of every kind.

The generator's contract is the oracle: its clean messages are the plain
dataset's, in order, and its malformed ones take turns in ``MALFORMED_KINDS``
order. The test finds the malformed messages by walking the stream against the
clean dataset, sends message i to partition i % 2 (so its offset is i // 2),
and then every malformed message must sit in silver.quarantine exactly once with
its kind's reason, every clean one in silver.routed, and gold's counts must be
the clean messages' counts.
"""

from __future__ import annotations

from collections import Counter

import pytest

from bronze.datasets.base import DatasetSpec
from bronze.datasets.malformed import MALFORMED_KINDS, MalformedMix
from bronze.datasets.registry import make_dataset
from core.config import RunConfig
from core.kafka.admin import ensure_topic
from core.kafka.producer import DeliveryErrors, open_producer, send
from core.kafka.source import KafkaTopic, read_kafka_stream
from core.run_plan import RunPlan
from core.tables import DeltaRsBackend
from core.warehouse import Warehouse
from pipelines.medallion import run_finite

pytestmark = [pytest.mark.spark, pytest.mark.slow]

TOPIC = "malformed-mix"
MESSAGES = 30_000
MALFORMED = MESSAGES // 100


def _expected(mix: MalformedMix, payloads: list[bytes | None]) -> tuple[dict[int, str], Counter]:
    """Stream index -> reason of each malformed message; the clean messages' counts per key."""
    clean = iter(p for batch in mix.clean.messages(10_000) for p in batch.payloads)
    following, reasons = next(clean, None), {}
    for i, payload in enumerate(payloads):
        if payload is not None and payload == following:
            following = next(clean, None)
        else:
            reasons[i] = MALFORMED_KINDS[len(reasons) % len(MALFORMED_KINDS)]
    counts: Counter = Counter()
    for batch in mix.clean.tuples(10_000):
        for key, count in zip(batch.keys.tolist(), batch.counts.tolist(), strict=True):
            counts[key] += count
    return reasons, counts


@pytest.fixture(scope="module")
def mixed_run(spark, kafka, tmp_path_factory):
    clean = make_dataset(DatasetSpec(name="ZIPF", messages=MESSAGES - MALFORMED, keys=500))
    mix = MalformedMix(clean, MALFORMED, seed=11)
    payloads = [p for batch in mix.messages(10_000) for p in batch.payloads]
    stamps = [s for batch in mix.messages(10_000) for s in batch.timestamps_ms.tolist()]
    ensure_topic(kafka, TOPIC, 2)
    failures = DeliveryErrors()
    producer = open_producer(kafka, "malformed-mix-test", failures)
    for i, (payload, stamp) in enumerate(zip(payloads, stamps, strict=True)):
        send(producer, TOPIC, b"k", payload, stamp, partition=i % 2)
    assert producer.flush(60.0) == 0, "messages still unsent after 60 s"
    assert failures.first is None, failures.first
    warehouse = Warehouse(tmp_path_factory.mktemp("malformed") / "lakehouse")
    spec = RunPlan(run_id="mix", source_type="ZIPF", grouping="DYNAMIC_KEY",
                   splitters=2, run=RunConfig(workers=4))  # fmt: skip
    kafka_rows = read_kafka_stream(spark, KafkaTopic(kafka, TOPIC, max_offsets_per_trigger=8_000))
    run_finite(spark, kafka_rows, spec, warehouse, DeltaRsBackend())
    return warehouse, mix, payloads, _expected(mix, payloads)


def test_every_malformed_message_is_quarantined_once_with_its_reason(mixed_run):
    warehouse, mix, payloads, (reasons, _) = mixed_run
    quarantine = DeltaRsBackend().read(warehouse.table_uri("silver", "quarantine")).to_pylist()
    assert len(reasons) == MALFORMED
    assert Counter(reasons.values()) == mix.expected_reasons()
    wanted = {(i % 2, i // 2): reason for i, reason in reasons.items()}
    got = Counter((row["partition"], row["offset"], row["error"]) for row in quarantine)
    assert got == Counter((p, o, r) for (p, o), r in wanted.items())
    for row in quarantine:  # kept byte-exact for inspection
        assert row["payload"] == payloads[row["offset"] * 2 + row["partition"]]


def test_every_clean_message_is_routed_once(mixed_run):
    warehouse, _, payloads, (reasons, _) = mixed_run
    routed = DeltaRsBackend().read(warehouse.table_uri("silver", "routed")).to_pandas()
    places = Counter(zip(routed["partition"].astype(int), routed["offset"].astype(int),
                         strict=True))  # fmt: skip
    assert places == Counter((i % 2, i // 2) for i in range(len(payloads)) if i not in reasons)


def test_gold_counts_are_the_clean_messages_counts(mixed_run):
    warehouse, _, _, (_, counts) = mixed_run
    gold = DeltaRsBackend().read(warehouse.table_uri("gold", "key_counts")).to_pandas()
    assert gold.groupby("key")["count"].sum().to_dict() == dict(counts)
