"""Silver on Spark routes exactly like the grouping engine (and ``dkg simulate``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from pyspark.sql import functions as F

from bronze.datasets.base import DatasetSpec
from bronze.datasets.registry import make_dataset
from core.spark.placement import group_keys_for, spread_group_keys
from core.storage import LOCAL_FILES
from core.tables import DeltaRsBackend, read_delta_stream
from silver.blocks import ROUTED, unpack
from silver.groupings.registry import make_grouping
from silver.routing import Routing
from silver.schemas import ROUTED_ARROW
from silver.stream import read_bronze_blocks, route_blocks, route_stream
from tests.integration.waiting import await_query

pytestmark = [pytest.mark.spark, pytest.mark.slow]

PARTITIONS = 2
WORKER_KEYS = spread_group_keys(5, PARTITIONS)  # the routing's tuples per worker: not read here


def _bronze(path: Path, messages: int, commits: int) -> list[tuple[int, int, bytes, int]]:
    """Write a ZIPF topic's messages as bronze rows in several commits; returns them."""
    spec = DatasetSpec(name="ZIPF", messages=messages, rate=500, seed=3, keys=200)
    batch = next(make_dataset(spec).messages(batch_size=messages))
    partitions = np.arange(messages) % PARTITIONS
    offsets = np.arange(messages) // PARTITIONS
    payloads = list(batch.payloads)
    payloads[7] = b"\xff not utf-8"  # one bad message must land in quarantine
    table = pa.table({
        "run_id": ["r1"] * messages,
        "topic": ["t"] * messages,
        "partition": pa.array(partitions, pa.int32()),
        "offset": pa.array(offsets, pa.int64()),
        "timestamp": pa.array(batch.timestamps_ms * 1000, pa.timestamp("us", tz="UTC")),
        "key": batch.keys,
        "value": payloads,
    })  # fmt: skip
    backend = DeltaRsBackend()
    for number, chunk in enumerate(np.array_split(np.arange(messages), commits)):
        backend.append(str(path), table.take(pa.array(chunk)), app_id="bronze", batch_id=number)
    return list(zip(partitions.tolist(), offsets.tolist(), payloads, batch.timestamps_ms.tolist(),
                    strict=True))  # fmt: skip


def _run_silver(spark, bronze: Path, checkpoint: Path, grouping: str, params: dict,
                packed_on_read: bool = False, snapshot_every: int = 1) -> pd.DataFrame:  # fmt: skip
    """The routing's rows, with the micro-batch of each in ``batch``."""
    collected: list[pd.DataFrame] = []
    if packed_on_read:  # the job's way: the read tasks pack the bronze files
        keys = group_keys_for(spark, PARTITIONS)
        blocks = read_bronze_blocks(spark, LOCAL_FILES, str(bronze), "r1", PARTITIONS, keys, 1)
        routed = route_blocks(blocks, Routing("ZIPF", PARTITIONS, grouping, 5, params), WORKER_KEYS,
                              snapshot_every=snapshot_every)  # fmt: skip
    else:
        raw = read_delta_stream(spark, str(bronze), max_files_per_trigger=1)
        routed = route_stream(raw, Routing("ZIPF", PARTITIONS, grouping, 5, params), WORKER_KEYS,
                              snapshot_every=snapshot_every)  # fmt: skip

    def collect(df, batch_id: int) -> None:
        rows = unpack(df.toArrow()["block"].to_pylist(), ROUTED_ARROW).to_pandas()
        collected.append(rows.assign(batch=batch_id))

    query = (
        routed.where(F.col("kind") == ROUTED).writeStream.foreachBatch(collect)
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
        .start()
    )
    await_query(query)
    return pd.concat(collected, ignore_index=True) if collected else pd.DataFrame()


# The job's own read path (bronze packed on read, the delta-rs warehouse) is
# compared with the engine for every grouping, from silver.routed as stored, in
# tests/integration/kafka/test_routing_all_groupings.py; the row path (delta-spark)
# and a packed read with a quarantined message are checked here.
@pytest.mark.parametrize(("grouping", "params", "packed_on_read"), [
    ("DYNAMIC_KEY", {}, False), ("SMALOPS", {"counting_window_ms": 1000}, True),
])  # fmt: skip
def test_silver_routes_each_partition_like_the_engine(spark, tmp_path, grouping, params,
                                                      packed_on_read):  # fmt: skip
    messages = _bronze(tmp_path / "bronze", 3000, commits=4)
    everything = _run_silver(spark, tmp_path / "bronze", tmp_path / "ckpt", grouping, params,
                             packed_on_read)  # fmt: skip
    snapshots = everything[everything["record"] == "snapshot"]
    assert set(snapshots["splitter"]) == set(range(PARTITIONS))  # each splitter's state, per batch
    assert snapshots["payload"].map(len).min() > 0
    _assert_routed_like_the_engine(everything[everything["record"] != "snapshot"], messages,
                                   grouping, params)  # fmt: skip


@pytest.mark.parametrize("packed_on_read", [False, True])
def test_snapshots_every_few_micro_batches_route_alike(spark, tmp_path, packed_on_read):
    # A continuous run records the routing snapshots every few micro-batches; the
    # state still goes from each batch to the next.
    messages = _bronze(tmp_path / "bronze", 3000, commits=4)
    everything = _run_silver(spark, tmp_path / "bronze", tmp_path / "ckpt", "DYNAMIC_KEY", {},
                             packed_on_read, snapshot_every=2)  # fmt: skip
    assert sorted(everything["batch"].unique()) == [0, 1, 2, 3]  # one bronze commit each
    snapshots = everything[everything["record"] == "snapshot"]
    assert sorted(set(zip(snapshots["batch"], snapshots["splitter"], strict=True))) == [
        (batch, splitter) for batch in (0, 2) for splitter in range(PARTITIONS)]  # fmt: skip
    _assert_routed_like_the_engine(everything[everything["record"] != "snapshot"], messages,
                                   "DYNAMIC_KEY", {})  # fmt: skip


def _assert_routed_like_the_engine(out: pd.DataFrame, messages: list, grouping: str,
                                   params: dict) -> None:  # fmt: skip
    assert len(out) == len(messages)  # one tuple per ZIPF message, or its quarantine row
    bad = out[out["error"].notna()]
    assert bad["offset"].tolist() == [7 // PARTITIONS] and bad["error"].tolist() == ["not_utf8"]
    assert (bad["worker"] == -1).all()
    good = out[out["error"].isna()]
    for partition in range(PARTITIONS):
        mine = good[good["partition"] == partition].sort_values("offset")
        engine = make_grouping(grouping, 5, params)
        expected = engine.route(
            mine["key"].to_numpy(object), mine["event_time_ms"].to_numpy(np.int64)
        )
        assert mine["worker"].tolist() == expected.tolist()


@pytest.mark.parametrize("splitters", [1, 2, 4, 7])
def test_splitters_spread_over_the_shuffle_partitions(spark, splitters):
    # Grouped by the splitter number itself, splitters 0, 1 and 3 hash to one of
    # two partitions: one core would route most of a skewed stream.
    from pyspark.sql import functions as F

    partitions = 2
    keys = spread_group_keys(splitters, partitions)
    frame = spark.createDataFrame([(k,) for k in keys], "k int")
    placed = [r[0] for r in frame.select(F.pmod(F.hash("k"), F.lit(partitions))).collect()]
    assert placed == [s % partitions for s in range(splitters)]
    assert len(set(keys)) == splitters


def test_spark_int_hash_is_sparks_own(spark):
    from pyspark.sql import functions as F

    from core.spark.placement import spark_int_hash

    values = spark.range(-1000, 5000).select(F.col("id").cast("int").alias("v"))
    hashed = values.select("v", F.hash("v").alias("h")).collect()
    assert [spark_int_hash(r["v"]) for r in hashed] == [r["h"] for r in hashed]
