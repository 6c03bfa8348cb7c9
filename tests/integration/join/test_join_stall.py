"""A stalled partition: Spark's built-in stream-stream join loses matches, ours does not.

Spark's join keeps one watermark per input, the largest event time seen on
*any* partition minus the delay. When one right partition stands still while
the others run ahead, that watermark passes the stalled partition's records:
the partners, once they come, are dropped as late and their lefts can never
match (they come out as unmatched once the watermark passes them). The
partition-aware join lets the slowest partition govern expiry, so the same data
joins exactly.
"""

from __future__ import annotations

import time

import pandas as pd
import pytest
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import from_arrow_schema

from bronze.join_data import JoinDataSpec, generate, produce_phase
from core.kafka.admin import ensure_topic
from core.kafka.client import KafkaClient
from core.kafka.source import KafkaTopic, read_kafka_stream
from core.tables import DeltaRsBackend
from core.warehouse import Warehouse
from pipelines.join_pipeline import JoinRequest, run_join
from silver.join import JoinParams
from silver.join.schemas import VALUE_ARROW
from tests.join_oracle import assert_run_matches_the_data, expected_join

pytestmark = [pytest.mark.spark, pytest.mark.slow]

SPEC = JoinDataSpec(lefts=3_000, rate=1_000, partitions=2, jump_fraction=0.05, stall_partition=1,
                    seed=7)  # fmt: skip
PARAMS = JoinParams(window_ms=2_000, sync_delay_ms=500, partitions=(2, 2))


def _side(spark, kafka: KafkaClient, topic: str, prefix: str) -> DataFrame:
    message = F.from_json(F.col("value").cast("string"), from_arrow_schema(VALUE_ARROW))
    rows = read_kafka_stream(spark, KafkaTopic(kafka, topic)).select(message.alias("m"))
    rows = rows.select(F.col("m.id").alias(f"{prefix}_id"),
                       F.timestamp_millis(F.col("m.created_ms")).alias(f"{prefix}_time"))  # fmt: skip
    # Heartbeats (null id) are kept; for the right side the join's inferred
    # "r_id is not null" is pushed below the watermark, so only real records move it.
    return rows.withWatermark(f"{prefix}_time", f"{PARAMS.sync_delay_ms} milliseconds")


def _wait_for_watermark_batch(query, timeout_s: float = 120.0) -> None:
    # While the partition stalls the job keeps running: Spark runs a batch with
    # the advanced watermark (a no-data batch), which evicts the left state.
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        marks = [p.get("eventTime", {}).get("watermark", "1970") for p in query.recentProgress]
        if any(not mark.startswith("1970") for mark in marks):
            return
        time.sleep(0.5)
    raise AssertionError(f"no batch ran with an advanced watermark: {query.recentProgress}")


def _builtin_join(spark, kafka: KafkaClient, data, topics: tuple[str, str],
                  checkpoint: str) -> list:  # fmt: skip
    for topic in topics:  # the source checks that its topic exists
        ensure_topic(kafka, topic, SPEC.partitions)
    left, right = _side(spark, kafka, topics[0], "l"), _side(spark, kafka, topics[1], "r")
    condition = F.expr(f"r_id = l_id AND r_time >= l_time AND "
                       f"r_time <= l_time + interval {PARAMS.window_ms} milliseconds")  # fmt: skip
    joined = left.join(right, condition, "leftOuter").select("l_id", "r_id")
    sink: list = []
    # One running query over both phases, as a job would run while a partition stalls.
    query = (joined.writeStream.foreachBatch(lambda df, _: sink.extend(df.collect()))
             .option("checkpointLocation", checkpoint).start())  # fmt: skip
    try:
        for phase in range(data.phases):
            produce_phase(data.phase(phase), kafka, topics, SPEC.partitions)
            query.processAllAvailable()
            if phase == 0:
                _wait_for_watermark_batch(query)
    finally:
        query.stop()
    return sink


def test_builtin_join_loses_the_stalled_partition(spark, join_kafka, tmp_path):
    data = generate(SPEC)
    held_back = set(data.phase(1)["id"].dropna())
    assert len(held_back) > 100
    rows = _builtin_join(spark, join_kafka, data, ("builtin-left", "builtin-right"),
                         str(tmp_path / "checkpoint"))  # fmt: skip
    out = pd.DataFrame([r.asDict() for r in rows]).dropna(subset=["l_id"])
    matched = set(out.loc[out["r_id"].notna(), "l_id"])
    stalled_pairs = held_back & set(data.matches)
    # The partitions that kept flowing joined fine ...
    assert set(data.matches) - held_back <= matched
    # ... but the right watermark followed them, so most of what the stalled
    # partition delivered later was older than it: dropped as late, never matched.
    watermark = data.phase(0).query("side == 1 and id.notna()")["created_ms"].max() - 500
    late = {i for i in stalled_pairs if data.matches[i] < watermark - 1}
    assert len(late) > len(stalled_pairs) / 2
    assert not late & matched


def test_partition_aware_join_is_exact_through_a_stall(spark, join_kafka, tmp_path):
    warehouse = Warehouse(tmp_path / "lakehouse")
    request = JoinRequest(SPEC, ("ours-left", "ours-right"), join_kafka, PARAMS, shards=2,
                          max_offsets_per_trigger=2_000, stats_window_ms=1_000)  # fmt: skip
    backend = DeltaRsBackend()
    result = run_join(spark, request, warehouse, backend)
    assert_run_matches_the_data(warehouse, result.run_id,
                                expected_join(SPEC, PARAMS.window_ms, PARAMS.sync_delay_ms))  # fmt: skip
    data = generate(SPEC)
    assert result.summary["matched"] == len(data.matches)
    assert result.summary["unmatched"] == SPEC.lefts - len(data.matches)
    assert result.summary["late_rights"] == result.summary["orphan_rights"] == 0
    stats = backend.read(warehouse.table_uri("gold", "join_stats")).to_pandas()
    windows = stats[stats["scope"] == "window"]
    assert windows["lefts"].sum() == SPEC.lefts
    assert windows["matched"].sum() == len(data.matches)
    # During the stall the held-back partners' lefts waited in state (over all shards).
    state = backend.read(warehouse.table_uri("silver", "join_state")).to_pandas()
    pending = state.groupby("batch_id")["pending_left"].sum()
    assert pending.max() >= len(set(data.phase(1)["id"].dropna()))
