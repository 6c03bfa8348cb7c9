"""A finite run end to end over a Kafka-shaped stream: gold equals the exact counts, and every
tuple went to the worker its grouping's per-tuple reference (``tests.reference_routings``) names."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from bronze.datasets.base import DatasetSpec
from core.config import RunConfig
from core.run_plan import RunPlan
from core.spark.session import rocksdb_available
from core.stages import IN_MEMORY_STATE_STORE
from core.tables import DeltaRsBackend, read_delta_stream
from core.warehouse import Warehouse
from pipelines.medallion import run_finite
from tests.integration.topic_tables import write_topic_table
from tests.reference_routings import route as reference_route

pytestmark = [pytest.mark.spark, pytest.mark.slow]

STATE_STORE = "spark.sql.streaming.stateStore.providerClass"


def _topic_table(path, messages: int, partitions: int) -> Counter:
    spec = DatasetSpec(name="COUNTRY_SKEW_R80", messages=messages, rate=200, seed=5)
    return write_topic_table(path, spec, partitions)


def test_finite_run_gold_counts_and_metrics(spark, tmp_path):
    exact = _topic_table(tmp_path / "topic", 4000, partitions=3)
    warehouse = Warehouse(tmp_path / "lakehouse")
    backend = DeltaRsBackend()
    spec = RunPlan(run_id="run-1", source_type="COUNTRY_SKEW_R80", grouping="DYNAMIC_KEY",
                    splitters=3, run=RunConfig(workers=6))  # fmt: skip
    kafka_rows = read_delta_stream(spark, str(tmp_path / "topic"))
    run_finite(spark, kafka_rows, spec, warehouse, backend)
    # Running again over the same checkpoints changes nothing.
    run_finite(spark, read_delta_stream(spark, str(tmp_path / "topic")), spec, warehouse, backend)

    counts = backend.read(warehouse.table_uri("gold", "key_counts")).to_pandas()
    assert counts.groupby("key")["count"].sum().to_dict() == dict(exact)
    metrics = backend.read(warehouse.table_uri("gold", "distribution_metrics")).to_pandas()
    cumulative = metrics[metrics["scope"] == "cumulative"].iloc[0]
    assert cumulative["tuples"] == sum(exact.values())
    assert 1.0 <= cumulative["dist_cost"] <= 6
    load = backend.read(warehouse.table_uri("gold", "worker_load")).to_pandas()
    assert load["tuples"].sum() == sum(exact.values())
    assert set(load["worker"]) == set(range(6))
    hot = backend.read(warehouse.table_uri("gold", "hot_keys")).to_pandas()
    assert "Turkey" in set(hot["key"])  # the R80 hot country got a pool
    assert (hot.loc[hot["key"] == "Turkey", "pool_size"] > 1).all()
    # Spark's offset log records the state store the routing's state went to; the
    # session's own choice is untouched by the query's start.
    offsets = (Path(warehouse.checkpoint("run-1-silver")) / "offsets" / "0").read_text()
    assert json.loads(offsets.splitlines()[1])["conf"][STATE_STORE] == IN_MEMORY_STATE_STORE
    assert spark.conf.get(STATE_STORE) != IN_MEMORY_STATE_STORE or not rocksdb_available(spark)


@pytest.mark.parametrize("grouping", ["SHUFFLE", "KEY", "PARTIAL_KEY", "DYNAMIC_KEY",
                                      "CONSISTENT_HASH", "SMALOPS", "W_CHOICES"])  # fmt: skip
def test_every_grouping_gives_exact_counts_and_accounts_for_every_message(spark, tmp_path,
                                                                          grouping):  # fmt: skip
    from chispa import assert_df_equality

    exact = _topic_table(tmp_path / "topic", 1500, partitions=2)
    warehouse = Warehouse(tmp_path / "lakehouse")
    backend = DeltaRsBackend()
    spec = RunPlan(run_id=f"all-{grouping}", source_type="COUNTRY_SKEW_R80", grouping=grouping,
                    splitters=2, run=RunConfig(workers=5))  # fmt: skip
    run_finite(spark, read_delta_stream(spark, str(tmp_path / "topic")), spec, warehouse, backend)
    routed = backend.read(warehouse.table_uri("silver", "routed")).to_pandas()
    quarantine = backend.read(warehouse.table_uri("silver", "quarantine")).to_pandas()
    bronze = backend.read(warehouse.table_uri("bronze", "raw_events")).to_pandas()
    accounted = set(zip(routed["partition"], routed["offset"], strict=True))
    accounted |= set(zip(quarantine["partition"], quarantine["offset"], strict=True))
    assert accounted == set(zip(bronze["partition"], bronze["offset"], strict=True))
    _routed_as_the_reference(routed, grouping, workers=5)
    counts = backend.read(warehouse.table_uri("gold", "key_counts")).to_pandas()
    totals = counts.groupby("key", as_index=False)["count"].sum()
    actual = spark.createDataFrame(totals.astype({"count": "int64"}))
    expected = spark.createDataFrame(sorted(exact.items()), "key string, count long")
    assert_df_equality(actual, expected, ignore_row_order=True, ignore_nullable=True)


def _routed_as_the_reference(routed, grouping: str, workers: int) -> None:
    """Each splitter's tuples, in its stream's order, went where the reference routing sends them."""
    ordered = routed.sort_values(["partition", "offset", "tuple_index"], kind="stable")
    for splitter, rows in ordered.groupby("splitter"):
        assert rows["partition"].nunique() == 1  # one partition each: the stream's order is known
        expected = reference_route(grouping, workers, rows["key"].tolist(),
                                   rows["event_time_ms"].tolist())  # fmt: skip
        got = rows["worker"].tolist()
        wrong = [i for i, (a, b) in enumerate(zip(got, expected, strict=True)) if a != b]
        assert not wrong, (f"splitter {splitter}: {len(wrong)} of {len(got)} tuples misrouted, "
                           f"first at {wrong[0]}: worker {got[wrong[0]]}, not {expected[wrong[0]]}")  # fmt: skip
