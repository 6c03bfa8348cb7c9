"""Silver writes every bronze message once (routed or quarantined); gold counts are exact."""

from __future__ import annotations

from collections import Counter

import pyarrow as pa
import pytest
from chispa import assert_df_equality

from core.storage import LOCAL_FILES
from core.tables import DeltaRsBackend, read_delta_stream
from silver.blocks import ROUTED_BLOCKS_DDL, pack
from silver.schemas import ROUTED_ARROW
from silver.sink import ROUTED_TABLE_COLUMNS, SilverTables, silver_batch_writer
from silver.stream import route_stream
from tests.integration.waiting import await_query

pytestmark = [pytest.mark.spark, pytest.mark.slow]


def _write_bronze(path, rows, backend):
    table = pa.table({
        "run_id": ["r1"] * len(rows), "topic": ["t"] * len(rows),
        "partition": pa.array([r[0] for r in rows], pa.int32()),
        "offset": pa.array([r[1] for r in rows], pa.int64()),
        "timestamp": pa.array([r[2] * 1000 for r in rows], pa.timestamp("us", tz="UTC")),
        "key": [b"k"] * len(rows), "value": [r[3] for r in rows],
    })  # fmt: skip
    for number, start in enumerate(range(0, len(rows), 200)):
        backend.append(str(path), table.slice(start, 200), app_id="bronze", batch_id=number)


def _tables(tmp_path) -> SilverTables:
    return SilverTables(*(str(tmp_path / name) for name in ("routed", "quarantine", "snapshots")))


def _run(spark, tmp_path, backend):
    raw = read_delta_stream(spark, str(tmp_path / "bronze"), max_files_per_trigger=1)
    routed = route_stream(raw, "TWITTER_TICKER", 2, "DYNAMIC_KEY", 4, {})
    writer = silver_batch_writer(backend, LOCAL_FILES, _tables(tmp_path), "silver")
    query = (routed.writeStream.foreachBatch(writer)
             .option("checkpointLocation", str(tmp_path / "ckpt"))
             .trigger(availableNow=True).start())  # fmt: skip
    await_query(query)


def test_every_message_is_routed_or_quarantined_once_and_gold_counts_are_exact(spark, tmp_path):
    import json

    backend = DeltaRsBackend()
    rows, expected = [], Counter()
    for i in range(1000):
        tickers = [["AAPL"], ["TSLA", "AAPL"], ["MSFT", "NVDA", "AAPL"]][i % 3]
        tweet = {"id": i, "created_at": 1_000_000 + i * 10, "text": " ".join(f"${t}" for t in tickers),
                 "lang": "en"}  # fmt: skip
        payload = json.dumps(tweet).encode()
        if i % 97 == 0:
            payload = b"{not json"
        else:
            expected.update(tickers)
        rows.append((i % 2, i // 2, 1_000_000 + i * 10, payload))
    _write_bronze(tmp_path / "bronze", rows, backend)
    _run(spark, tmp_path, backend)
    version = backend.version(tmp_path / "routed")
    _run(spark, tmp_path, backend)  # a second run over the same checkpoint writes nothing
    assert backend.version(tmp_path / "routed") == version

    routed = backend.read(tmp_path / "routed").to_pandas()
    quarantine = backend.read(tmp_path / "quarantine").to_pandas()
    assert len(quarantine) == len([i for i in range(1000) if i % 97 == 0])
    assert set(quarantine["error"]) == {"not_json"}
    messages = set(zip(routed["partition"], routed["offset"], strict=True))
    messages |= set(zip(quarantine["partition"], quarantine["offset"], strict=True))
    assert len(messages) == 1000  # every bronze message accounted for, none twice
    assert not routed.duplicated(["partition", "offset", "tuple_index"]).any()

    assert routed.groupby("splitter")["partition"].nunique().to_dict() == {0: 1, 1: 1}
    counts = routed.groupby("key", as_index=False)["count"].sum()
    actual = spark.createDataFrame(counts.astype({"count": "int64"}))
    exact = spark.createDataFrame(sorted(expected.items()), "key string, count long")
    assert_df_equality(actual, exact, ignore_row_order=True, ignore_nullable=True)


def test_replayed_batch_completes_only_the_missing_table(spark, tmp_path):
    backend = DeltaRsBackend()
    df = spark.createDataFrame(
        [("r", 0, 0, 0, 0, "k", 1, 5, None, None, 2, "tuple"),
         ("r", 0, 0, 1, None, None, None, None, "not_json", b"x", -1, "quarantine")],
        "run_id string, splitter int, partition int, offset long, tuple_index int, key string, "
        "count long, event_time_ms long, error string, payload binary, worker int, record string",
    )  # fmt: skip
    writer = silver_batch_writer(backend, LOCAL_FILES, _tables(tmp_path), "silver")
    backend.append(tmp_path / "routed", df.filter("error is null").select(*ROUTED_TABLE_COLUMNS)
                   .toArrow(), "silver", 0)  # crashed right after the first write  # fmt: skip
    rows = pa.Table.from_pandas(df.toPandas(), preserve_index=False).select(ROUTED_ARROW.names)
    blocks = spark.createDataFrame([(0, rows.num_rows, pack(rows.cast(ROUTED_ARROW)))],
                                   ROUTED_BLOCKS_DDL)  # fmt: skip
    writer(blocks, 0)
    writer(blocks, 0)
    assert backend.read(tmp_path / "routed").num_rows == 1
    assert backend.read(tmp_path / "quarantine").num_rows == 1
    # The replay's tasks wrote the routed file again, but only the missing commit was made.
    assert backend.version(tmp_path / "routed") == 1
