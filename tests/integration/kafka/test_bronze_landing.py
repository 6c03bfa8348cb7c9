"""Bronze landing: silver's read tasks write Kafka ranges to Parquet; the table equals the row path's."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from bronze.landing import bronze_batches, write_landed
from bronze.schemas import RAW_EVENTS_ARROW
from bronze.stage import BRONZE
from core.config import RunConfig
from core.kafka.admin import end_offsets, ensure_topic
from core.kafka.client import KafkaClient
from core.kafka.producer import DeliveryErrors, open_producer, send
from core.kafka.source import KafkaRange, KafkaTopic
from core.run_plan import RunPlan
from core.stages import RunContext
from core.storage import LOCAL_FILES
from core.tables import DeltaRsBackend
from core.warehouse import Warehouse
from pipelines.medallion import StageTimes, _drain
from silver.stage import SILVER

pytestmark = [pytest.mark.spark, pytest.mark.slow]

# Bytes a text path would mangle: NUL, invalid UTF-8, an empty payload, no key.
MESSAGES = [(b"k1", b'\x00\xff{"a": 1}'), (None, b""), (b"", b"\xc3\x28"), (b"k2", b"x" * 5000)]


def _fill(kafka: KafkaClient, topic: str, copies: int, partitions: int = 2) -> None:
    failures = DeliveryErrors()
    producer = open_producer(kafka, f"{topic}-test", failures)
    ensure_topic(kafka, topic, partitions)
    for i in range(copies):
        for j, (key, value) in enumerate(MESSAGES):
            send(producer, topic, key, value, 1_700_000_000_000 + i, partition=(i + j) % partitions)
    assert producer.flush(30.0) == 0 and failures.first is None


def test_a_landed_range_is_the_partition_byte_exact_and_lands_again_identically(
    kafka, tmp_path
) -> None:
    _fill(kafka, "landing-range", copies=50)
    ends = end_offsets(kafka, "landing-range")
    kafka_range = KafkaRange("landing-range", 0, 3, ends[0])

    def land(run_id: str):
        rows = pa.Table.from_batches(bronze_batches(kafka_range, kafka, run_id),
                                     schema=RAW_EVENTS_ARROW)  # fmt: skip
        return write_landed(kafka_range, rows, LOCAL_FILES,
                            str(tmp_path), run_id)  # fmt: skip

    first = land("run-a")
    assert first is not None and first.rows == ends[0] - 3
    table = pq.read_table(tmp_path / first.name)
    content = (tmp_path / first.name).read_bytes()
    again, other_run = land("run-a"), land("run-b")

    assert table.schema.equals(RAW_EVENTS_ARROW)
    assert table["offset"].to_pylist() == list(range(3, ends[0]))
    assert set(table["run_id"].to_pylist()) == {"run-a"}
    assert set(table["partition"].to_pylist()) == {0}
    sent = [MESSAGES[j] for i in range(50) for j in range(len(MESSAGES)) if (i + j) % 2 == 0]
    assert list(zip(table["key"].to_pylist(), table["value"].to_pylist(), strict=True)) == sent[3:]
    assert again == first and (tmp_path / first.name).read_bytes() == content
    assert other_run is not None and other_run.name != first.name
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([first.name, other_run.name])


def test_landed_bronze_equals_the_row_path(
    spark, kafka, tmp_path
) -> None:
    _fill(kafka, "landing-stage", copies=300, partitions=3)
    topic = KafkaTopic(kafka, "landing-stage", max_offsets_per_trigger=500)
    backend = DeltaRsBackend()
    tables = {}
    # Landed by silver's read tasks, or as rows by bronze's own query.
    for label, source, stage in (("landed", topic, SILVER), ("rows", topic.rows(spark), BRONZE)):
        warehouse = Warehouse(tmp_path / label)
        spec = RunPlan(run_id=label, source_type="ZIPF", grouping="KEY", splitters=3, run=RunConfig(workers=2))
        times = StageTimes()
        _drain(stage.build(RunContext(spark, source, spec, warehouse, backend)), times)
        tables[label] = backend.read(warehouse.table_uri("bronze", "raw_events"))
        assert times.profile[stage.name]["rows"] == 300 * len(MESSAGES)  # messages, not files
        assert times.profile[stage.name]["batches"] >= 3  # 500 messages per micro-batch
    landed, rows = (tables[k].drop(["run_id"]).sort_by([("partition", "ascending"),
                                                        ("offset", "ascending")])
                    for k in ("landed", "rows"))  # fmt: skip

    assert landed.num_rows == 300 * len(MESSAGES)
    assert landed.equals(rows)
    assert tables["landed"].schema.equals(tables["rows"].schema)
    # None of these payloads is a ZIPF message: silver quarantined every one, once.
    quarantine = backend.read(Warehouse(tmp_path / "landed").table_uri("silver", "quarantine"))
    assert sorted(zip(quarantine["partition"].to_pylist(), quarantine["offset"].to_pylist(),
                      strict=True)) == sorted(zip(rows["partition"].to_pylist(),
                                                  rows["offset"].to_pylist(), strict=True))  # fmt: skip

