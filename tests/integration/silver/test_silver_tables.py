"""The silver query writes every bronze message once (routed or quarantined) and its workers'
partials give the figures of the tuples they served, each micro-batch once."""

from __future__ import annotations

import json
from collections import Counter

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from chispa import assert_df_equality
from deltalake import DeltaTable

from core.spark.placement import spread_group_keys
from core.stages import Stage, recorded_shuffle_partitions, start_query
from core.storage import LOCAL_FILES
from core.tables import DeltaRsBackend, read_delta_stream
from core.tables.task_files import (
    TASK_FILES_ARROW,
    commit_task_files,
    task_file_name,
    write_task_files,
)
from gold.metrics.partials import RunPartials
from silver.blocks import FILES, ROUTED_BLOCKS_DDL, TUPLES, pack
from silver.routing import Routing
from silver.schemas import ROUTED_TABLE_ARROW, SNAPSHOTS_ARROW
from silver.sink import SilverTables, silver_batch_writer
from silver.stream import route_stream
from silver.workers import WORKER_INPUT_ARROW, WorkerServing
from tests.integration.waiting import await_query
from tests.reference_metrics import reference_metrics

pytestmark = [pytest.mark.spark, pytest.mark.slow]

SPLITTERS, WORKERS, APP = 2, 4, "r1-silver"
WINDOW_MS, PROCESS_MS, SPEED = 15_000, 2.0, 4.0


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


def _tickers(messages: int) -> tuple[list[tuple], Counter]:
    """Tweets naming tickers, every 97th unparseable; and the exact count per ticker."""
    rows, expected = [], Counter()
    for i in range(messages):
        tickers = [["AAPL"], ["TSLA", "AAPL"], ["MSFT", "NVDA", "AAPL"]][i % 3]
        tweet = {"id": i, "created_at": 1_000_000 + i * 10, "text": " ".join(f"${t}" for t in tickers),
                 "lang": "en"}  # fmt: skip
        payload = json.dumps(tweet).encode()
        if i % 97 == 0:
            payload = b"{not json"
        else:
            expected.update(tickers)
        rows.append((i % 2, i // 2, 1_000_000 + i * 10, payload))
    return rows, expected


def _tables(tmp_path) -> SilverTables:
    return SilverTables(*(str(tmp_path / name) for name in
                          ("routed", "quarantine", "snapshots", "latency", "windows")))  # fmt: skip


def _writer(backend, tables: SilverTables):
    serving = WorkerServing(WINDOW_MS, PROCESS_MS, SPEED, "r1",
                            tables.partials_landing(LOCAL_FILES, APP))  # fmt: skip
    return silver_batch_writer(backend, LOCAL_FILES, tables, APP, serving)


def _stage(spark, tmp_path, backend) -> Stage:
    tables, partitions = _tables(tmp_path), 4
    raw = read_delta_stream(spark, str(tmp_path / "bronze"), max_files_per_trigger=1)
    routed = route_stream(raw, Routing("TWITTER_TICKER", SPLITTERS, "DYNAMIC_KEY", WORKERS),
                          spread_group_keys(WORKERS, partitions),
                          tables.routing_landing(LOCAL_FILES, APP), shuffle_partitions=partitions)  # fmt: skip
    return Stage("silver", routed, _writer(backend, tables), str(tmp_path / "ckpt"),
                 shuffle_partitions=partitions)  # fmt: skip


def test_every_message_is_routed_or_quarantined_once_and_counts_are_exact(spark, tmp_path):
    backend = DeltaRsBackend()
    rows, expected = _tickers(1000)
    _write_bronze(tmp_path / "bronze", rows, backend)
    assert recorded_shuffle_partitions(str(tmp_path / "ckpt")) is None
    await_query(start_query(_stage(spark, tmp_path, backend), availableNow=True))
    # Spark's checkpoint keeps the stage's count, not the session's (2): a resume reads it.
    assert spark.conf.get("spark.sql.shuffle.partitions") == "2"
    assert recorded_shuffle_partitions(str(tmp_path / "ckpt")) == 4
    versions = {name: backend.version(tmp_path / name) for name in ("routed", "windows")}
    # The same checkpoint again: nothing new, nothing written.
    await_query(start_query(_stage(spark, tmp_path, backend), availableNow=True))
    assert {name: backend.version(tmp_path / name) for name in versions} == versions

    routed = backend.read(tmp_path / "routed").to_pandas()
    quarantine = backend.read(tmp_path / "quarantine").to_pandas()
    assert len(quarantine) == len([i for i in range(1000) if i % 97 == 0])
    assert set(quarantine["error"]) == {"not_json"}
    messages = set(zip(routed["partition"], routed["offset"], strict=True))
    messages |= set(zip(quarantine["partition"], quarantine["offset"], strict=True))
    assert len(messages) == 1000  # every bronze message accounted for, none twice
    assert not routed.duplicated(["partition", "offset", "tuple_index"]).any()
    assert routed.groupby("splitter")["partition"].nunique().to_dict() == {0: 1, 1: 1}

    exact = spark.createDataFrame(sorted(expected.items()), "key string, count long")
    for table in (routed, backend.read(tmp_path / "windows").to_pandas()):
        counts = table.groupby("key", as_index=False)["count"].sum()
        actual = spark.createDataFrame(counts.astype({"count": "int64"}))
        assert_df_equality(actual, exact, ignore_row_order=True, ignore_nullable=True)


def test_workers_partials_give_the_tuples_figures_once_per_batch(spark, tmp_path):
    backend = DeltaRsBackend()
    rows, _ = _tickers(1200)
    _write_bronze(tmp_path / "bronze", rows, backend)
    await_query(start_query(_stage(spark, tmp_path, backend), availableNow=True))

    windows = backend.read(tmp_path / "windows").to_pandas()
    latency = backend.read(tmp_path / "latency").to_pandas()
    assert set(windows["run_id"]) == {"r1"} and windows["batch_id"].nunique() == 6  # 200 per batch
    assert not windows.duplicated(["batch_id", "window_start_ms", "worker", "key"]).any()
    partials = RunPartials(WORKERS, 60_000, SPEED, PROCESS_MS)
    partials.add_windows(windows)
    partials.add_latency(latency)
    # The oracle: the routed tuples as stored, one Delta version per micro-batch.
    path, files_before, batches = str(tmp_path / "routed"), set(), []
    for version in range(1, backend.version(path) + 1):
        files = set(DeltaTable(path, version=version).file_uris())
        batches.append(pq.ParquetDataset(sorted(files - files_before)).read().to_pandas()
                       .assign(batch=version))  # fmt: skip
        files_before = files
    expected = reference_metrics(pd.concat(batches), WORKERS, 60_000, PROCESS_MS, SPEED)
    actual = partials.result(1.0)
    for row in [actual.cumulative, *actual.windows]:
        want = expected[None if row.scope == "cumulative" else row.window_start_ms]
        for name, value in want.items():
            tolerance = 5e-3 if name in ("p50_ms", "p99_ms") else 1e-9  # three digits kept
            assert getattr(row, name) == (pytest.approx(value, rel=tolerance)
                                          if isinstance(value, float) else value), name  # fmt: skip


def test_a_query_killed_while_writing_its_first_offset_starts_again(spark, tmp_path):
    backend = DeltaRsBackend()
    rows, _ = _tickers(400)
    _write_bronze(tmp_path / "bronze", rows, backend)
    # What SIGKILL leaves when it lands in the first offset's write: a temporary
    # file and no batch. Spark refuses such a checkpoint for a stateful query.
    offsets = tmp_path / "ckpt" / "offsets"
    offsets.mkdir(parents=True)
    (offsets / ".0.5f1c2a.tmp").write_text("v1\n")
    await_query(start_query(_stage(spark, tmp_path, backend), availableNow=True))
    routed = backend.read(tmp_path / "routed")
    assert backend.read(tmp_path / "windows")["tuples"].to_numpy().sum() == routed.num_rows > 0


def test_replayed_batch_completes_only_the_missing_tables(spark, tmp_path):
    backend, tables = DeltaRsBackend(), _tables(tmp_path)
    writer = _writer(backend, tables)  # creates the tables
    routed = pa.table({"run_id": ["r1"], "splitter": [0], "partition": [0], "offset": [0],
                       "tuple_index": [0], "key": ["k"], "count": [1], "event_time_ms": [5],
                       "worker": [2]}).cast(ROUTED_TABLE_ARROW)  # fmt: skip
    snapshot = pa.table({"run_id": ["r1"], "splitter": [0], "event_time_ms": [5],
                         "state": [b"s"]}).cast(SNAPSHOTS_ARROW)  # fmt: skip
    # What the routing task of batch 0 wrote and passed on: its files, and worker 2's tuple.
    files = write_task_files(LOCAL_FILES, {"routed": (tables.routed, routed),
                                           "snapshots": (tables.snapshots, snapshot)},
                             task_file_name(APP, 0, 0))  # fmt: skip
    tuples = routed.select(WORKER_INPUT_ARROW.names).cast(WORKER_INPUT_ARROW)
    batch = spark.createDataFrame([(0, FILES, files.num_rows, pack(files.cast(TASK_FILES_ARROW))),
                                   (0, TUPLES, 1, pack(tuples))], ROUTED_BLOCKS_DDL)  # fmt: skip
    # Crashed right after the first commit of batch 0.
    commit_task_files(backend, {"routed": tables.routed},
                      [r for r in files.to_pylist() if r["target"] == "routed"], APP, 0)  # fmt: skip
    writer(batch, 0)
    writer(batch, 0)
    rows = {"routed": 1, "quarantine": 0, "snapshots": 1, "latency": 1, "windows": 1}
    assert {t: backend.read(getattr(tables, t)).num_rows for t in rows} == rows
    # Each table took batch 0 in one commit (version 0 created it); quarantine had nothing.
    assert {t: backend.version(getattr(tables, t)) for t in rows} == {
        "routed": 1, "quarantine": 0, "snapshots": 1, "latency": 1, "windows": 1}
    # The windows' commit holds worker 2's queue after its one tuple, as the log has it.
    info = json.loads((tmp_path / "windows" / "_delta_log" / f"{1:020d}.json").read_text().splitlines()[0])
    assert json.loads(info["commitInfo"]["userMetadata"]) == {"worker_queues": {"2": [5.0, PROCESS_MS]}}
