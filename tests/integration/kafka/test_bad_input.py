"""Bad messages through a real topic and the whole pipeline; a missing topic.

One pipeline run (module fixture) serves every test here: malformed messages
mixed with good ones are produced into a topic on the real broker, the job
drains it with the progress listener attached, and then every bad message must
sit in silver.quarantine with its reason, every good one in silver.routed, and
gold's counts must be exact. Bad SQL, as a user sees it, is in test_cli_mistakes.py.
"""

from __future__ import annotations

import functools
from collections import Counter

import pytest

from bronze.datasets.base import DEFAULT_START_MS
from core.config import RunConfig
from core.kafka.admin import BrokerError, end_offsets, ensure_topic
from core.kafka.source import KafkaTopic, read_kafka_stream
from core.run_plan import RunPlan
from core.tables import DeltaRsBackend
from core.warehouse import Warehouse
from pipelines.medallion import run_finite
from pipelines.stream_progress import StreamProgressListener
from tests.messages import keyed_json

pytestmark = [pytest.mark.spark, pytest.mark.slow]

TOPIC = "bad-input"
TS = DEFAULT_START_MS
YEAR_MS = 365 * 24 * 3600 * 1000


_keyed = functools.partial(keyed_json, key="k1", timestamp=TS)


BAD: list[tuple[bytes | None, str]] = [
    (b"\xff\xfe{\"key\": 1}", "not_utf8"),
    (b"{not json", "not_json"),
    (b"[" * 50_000, "not_json"),
    (b"", "not_json"),
    (b'{"key": "k1", "count": 1}', "missing_field:timestamp"),
    (b'{"count": 1, "timestamp": %d}' % TS, "missing_field:key"),
    (_keyed(key=""), "empty_key"),
    # A 1 MB key; the message stays under the broker's default 1 MiB message limit.
    (_keyed(key="k" * 1_000_000), "key_too_long"),
    (b'{"key": "\\ud800", "count": 1, "timestamp": %d}' % TS, "bad_key"),
    (_keyed(count=-5), "bad_count"),
    (_keyed(count="7"), "bad_count"),
    (_keyed(count=2.5), "bad_count"),
    (_keyed(timestamp=0), "timestamp_out_of_range"),  # 1970
    (_keyed(timestamp=TS + 10 * YEAR_MS), "timestamp_out_of_range"),
    (_keyed(timestamp="yesterday"), "bad_timestamp"),
    (None, "null_value"),  # a tombstone
]


def _messages() -> tuple[list[tuple[bytes | None, str | None]], Counter]:
    """Good messages with every bad one spread among them; exact good counts."""
    messages: list[tuple[bytes | None, str | None]] = []
    exact: Counter = Counter()
    bad = iter(BAD)
    for i in range(320):
        key, count = f"k{i % 7 if i % 3 else 0}", 1 + i % 3
        messages.append((_keyed(key=key, count=count, timestamp=TS + i * 10), None))
        exact[key] += count
        if i % 20 == 5:
            messages.append(next(bad, (None, "null_value")))
    return messages, exact


@pytest.fixture(scope="module")
def bad_run(spark, bootstrap, kafka, tmp_path_factory):
    from kafka import KafkaProducer

    messages, exact = _messages()
    ensure_topic(kafka, TOPIC, 2)
    producer = KafkaProducer(bootstrap_servers=bootstrap, max_request_size=4 << 20,
                             enable_idempotence=False, acks=1)  # fmt: skip
    sent = [producer.send(TOPIC, key=f"m{i}".encode(), value=value, partition=i % 2,
                          timestamp_ms=TS + i * 10) for i, (value, _) in enumerate(messages)]
    producer.flush()
    for future in sent:
        future.get(timeout=30)  # every message is on the broker, or the test stops here
    producer.close()
    warehouse = Warehouse(tmp_path_factory.mktemp("bad") / "lakehouse")
    spec = RunPlan(run_id="bad", source_type="ZIPF", grouping="DYNAMIC_KEY",
                   splitters=2, run=RunConfig(workers=4))  # fmt: skip
    listener = StreamProgressListener(kafka_end=lambda: sum(end_offsets(kafka, TOPIC).values()))
    spark.streams.addListener(listener)
    try:
        kafka_rows = read_kafka_stream(spark, KafkaTopic(kafka, TOPIC, max_offsets_per_trigger=150))
        run_finite(spark, kafka_rows, spec, warehouse, DeltaRsBackend())
        listener.wait_idle(timeout_s=30, until="silver")
    finally:
        spark.streams.removeListener(listener)
    return warehouse, messages, exact, listener


def test_every_bad_message_is_quarantined_with_its_reason(bad_run):
    warehouse, messages, _, _ = bad_run
    backend = DeltaRsBackend()
    quarantine = backend.read(warehouse.table_uri("silver", "quarantine")).to_pandas()
    routed = backend.read(warehouse.table_uri("silver", "routed")).to_pandas()
    # The producer chose partition i % 2, so offsets follow from the message order.
    position = {(i % 2, i // 2): value_reason for i, value_reason in enumerate(messages)}
    got = {(int(p), int(o)): r for p, o, r in
           zip(quarantine["partition"], quarantine["offset"], quarantine["error"], strict=True)}  # fmt: skip
    wanted = {place: reason for place, (_, reason) in position.items() if reason is not None}
    assert got == wanted
    assert {reason for _, reason in BAD} <= set(got.values())
    for p, o, payload in zip(quarantine["partition"], quarantine["offset"], quarantine["payload"],
                             strict=True):  # fmt: skip
        assert payload == position[(int(p), int(o))][0]  # kept byte-exact for inspection
    good = {place for place, (_, reason) in position.items() if reason is None}
    assert set(zip(routed["partition"].astype(int), routed["offset"].astype(int),
                   strict=True)) == good  # fmt: skip
    assert len(routed) == len(good)


def test_gold_counts_are_exact(bad_run):
    warehouse, _, exact, _ = bad_run
    counts = DeltaRsBackend().read(warehouse.table_uri("gold", "key_counts")).to_pandas()
    assert counts.groupby("key")["count"].sum().to_dict() == dict(exact)


def test_progress_listener_saw_every_stage_and_no_lag_at_the_end(bad_run):
    _, messages, _, listener = bad_run
    assert listener.finished[:2] == ["bronze", "silver"]
    bronze = listener.last["bronze"]
    assert bronze["done"] == len(messages) and bronze["lag"] == 0
    assert bronze["batch"] >= 2  # 150 messages per micro-batch
    assert listener.last["silver"]["rows"] == len(messages)


def test_a_topic_that_does_not_exist_is_named(spark, kafka):
    with pytest.raises(BrokerError, match="'no-such-topic' does not exist"):
        read_kafka_stream(spark, KafkaTopic(kafka, "no-such-topic"))
