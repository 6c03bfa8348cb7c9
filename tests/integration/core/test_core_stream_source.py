"""The dkg_delta streaming source and the idempotent foreachBatch sink, end to end."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import DeltaTable
from pyspark.errors import StreamingQueryException
from pyspark.sql import DataFrame, SparkSession

from core.tables import DeltaRsBackend, foreach_batch_writer, read_delta_stream
from core.warehouse import Warehouse
from tests.integration.waiting import await_query

pytestmark = [pytest.mark.spark, pytest.mark.slow]

Events = Callable[[int, int], pa.Table]
Batches = list[tuple[int, list[int]]]


def _run(stream: DataFrame, checkpoint: Path, handler: Callable[[DataFrame, int], None]) -> None:
    query = (
        stream.writeStream.foreachBatch(handler)
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
        .start()
    )
    await_query(query, 120)


def _collect(into: Batches) -> Callable[[DataFrame, int], None]:
    def handler(df: DataFrame, batch_id: int) -> None:
        into.append((batch_id, df.toArrow().column("id").to_pylist()))

    return handler


def _append_commits(
    backend: DeltaRsBackend, path: Path, events: Events, first: int, commits: int
) -> None:
    for c in range(first, first + commits):
        backend.append(path, events(c * 10, 10), app_id="producer", batch_id=c)


def test_every_row_once_across_batches_and_restart_reads_only_new_rows(
    core_spark: SparkSession, warehouse: Warehouse, backend: DeltaRsBackend, events: Events
) -> None:
    path = warehouse.table_uri("bronze", "raw_events")
    _append_commits(backend, path, events, first=0, commits=5)
    checkpoint = warehouse.checkpoint("bronze_reader")
    stream = read_delta_stream(core_spark, path, max_files_per_trigger=2)

    first: Batches = []
    _run(stream, checkpoint, _collect(first))
    _append_commits(backend, path, events, first=5, commits=2)
    second: Batches = []
    _run(read_delta_stream(core_spark, path, max_files_per_trigger=2), checkpoint, _collect(second))

    first_ids = [i for _, ids in first for i in ids]
    second_ids = [i for _, ids in second for i in ids]
    assert len(first) == 3  # 5 one-file commits, at most 2 files per batch
    assert sorted(first_ids) == list(range(50))
    assert sorted(second_ids) == list(range(50, 70))
    assert [b for b, _ in second] == [3]  # batch ids continue from the checkpoint


def test_a_byte_cap_takes_whole_commits_and_at_least_one(
    core_spark: SparkSession, warehouse: Warehouse, backend: DeltaRsBackend, events: Events
) -> None:
    path = warehouse.table_uri("bronze", "raw_events")
    _append_commits(backend, path, events, first=0, commits=5)
    sizes = pa.table(DeltaTable(str(path)).get_add_actions(flatten=True))["size_bytes"].to_pylist()
    batches: Batches = []
    # Room for two of these commits per batch, never three.
    cap = 2 * max(sizes) + min(sizes) // 2
    _run(read_delta_stream(core_spark, path, max_bytes_per_trigger=cap),
         warehouse.checkpoint("by_bytes"), _collect(batches))  # fmt: skip
    one: Batches = []
    _run(read_delta_stream(core_spark, path, max_bytes_per_trigger=1),
         warehouse.checkpoint("one_byte"), _collect(one))  # fmt: skip

    assert [len(ids) for _, ids in batches] == [20, 20, 10]
    assert sorted(i for _, ids in batches for i in ids) == list(range(50))
    assert [len(ids) for _, ids in one] == [10] * 5  # a commit larger than the cap still goes


def test_stream_types_and_partition_values(
    core_spark: SparkSession, warehouse: Warehouse, backend: DeltaRsBackend
) -> None:
    path = warehouse.table_uri("silver", "routed")
    day = dt.date(2024, 5, 1)
    noon = dt.datetime(2024, 5, 1, 12, tzinfo=dt.UTC)
    table = pa.table(
        {
            "id": pa.array([1, 2, 3], pa.int64()),
            "worker": pa.array([0, 1, 1], pa.int32()),
            "day": pa.array([day, day, None], pa.date32()),
            "at": pa.array([noon] * 3, pa.timestamp("us", "UTC")),
        }
    )
    backend.append(path, table, "q", 0, partition_by=["worker", "day"])
    rows: list[dict[str, object]] = []

    _run(
        read_delta_stream(core_spark, path),
        warehouse.checkpoint("routed_reader"),
        # Arrow keeps the UTC zone; collect() would convert to the local zone.
        lambda df, _: rows.extend(df.toArrow().to_pylist()),
    )

    assert sorted(rows, key=lambda r: r["id"]) == [
        {"id": 1, "worker": 0, "day": day, "at": noon},
        {"id": 2, "worker": 1, "day": day, "at": noon},
        {"id": 3, "worker": 1, "day": None, "at": noon},
    ]


def test_starting_version_skips_earlier_commits(
    core_spark: SparkSession, warehouse: Warehouse, backend: DeltaRsBackend, events: Events
) -> None:
    path = warehouse.table_uri("bronze", "raw_events")
    _append_commits(backend, path, events, first=0, commits=3)
    batches: Batches = []

    _run(
        read_delta_stream(core_spark, path, starting_version=2),
        warehouse.checkpoint("q"),
        _collect(batches),
    )

    assert sorted(i for _, ids in batches for i in ids) == list(range(20, 30))


def test_columns_option_reads_only_the_named_columns(
    core_spark: SparkSession, warehouse: Warehouse, backend: DeltaRsBackend, events: Events
) -> None:
    path = warehouse.table_uri("bronze", "raw_events")
    _append_commits(backend, path, events, first=0, commits=2)
    seen: list[pa.Table] = []

    _run(
        read_delta_stream(core_spark, path, columns=("count", "id")),
        warehouse.checkpoint("q"),
        lambda df, _batch_id: seen.append(df.toArrow()),
    )

    table = pa.concat_tables(seen)
    assert table.column_names == ["count", "id"]
    assert sorted(zip(table["id"].to_pylist(), table["count"].to_pylist(), strict=True)) == [
        (i, i % 5 + 1) for i in range(20)
    ]
    with pytest.raises(Exception, match="no column 'colour'"):
        read_delta_stream(core_spark, path, columns=("id", "colour"))


def test_change_commits_fail_the_stream_unless_skipped(
    core_spark: SparkSession, warehouse: Warehouse, backend: DeltaRsBackend
) -> None:
    path = warehouse.table_uri("gold", "key_counts")
    backend.merge(path, pa.table({"id": [1, 2]}), ["id"], "q", 0)
    backend.merge(path, pa.table({"id": [2, 3]}), ["id"], "q", 1)  # rewrites a file

    with pytest.raises(StreamingQueryException, match="removes rows"):
        _run(read_delta_stream(core_spark, path), warehouse.checkpoint("strict"), _collect([]))
    batches: Batches = []
    _run(
        read_delta_stream(core_spark, path, skip_change_commits=True),
        warehouse.checkpoint("lenient"),
        _collect(batches),
    )

    assert sorted(i for _, ids in batches for i in ids) == [1, 2]


def test_foreach_batch_writer_is_exactly_once_when_a_batch_is_replayed(
    core_spark: SparkSession, warehouse: Warehouse, backend: DeltaRsBackend, events: Events
) -> None:
    source = warehouse.table_uri("bronze", "raw_events")
    target = warehouse.table_uri("silver", "copy")
    checkpoint = warehouse.checkpoint("silver_copy")
    _append_commits(backend, source, events, first=0, commits=4)
    writer = foreach_batch_writer(backend, target, app_id="silver_copy")

    _run(read_delta_stream(core_spark, source, max_files_per_trigger=2), checkpoint, writer)
    version = backend.version(target)
    # Forget that the last batch finished: Spark re-runs it on restart, as after
    # a crash between the table commit and the checkpoint commit.
    commits = sorted((Path(checkpoint) / "commits").glob("[0-9]*"), key=lambda p: int(p.name))
    last = commits[-1]
    last.unlink()
    last.with_name(f".{last.name}.crc").unlink(missing_ok=True)
    _run(read_delta_stream(core_spark, source, max_files_per_trigger=2), checkpoint, writer)

    ids = backend.read(target).column("id").to_pylist()
    assert sorted(ids) == list(range(40))
    assert backend.version(target) == version
    assert backend.transaction_version(target, "silver_copy") == len(commits) - 1


def test_foreach_batch_writer_merge_mode(
    core_spark: SparkSession, warehouse: Warehouse, backend: DeltaRsBackend
) -> None:
    source = warehouse.table_uri("silver", "partials")
    target = warehouse.table_uri("gold", "key_counts")
    backend.append(source, pa.table({"key": ["a", "b"], "n": [1, 2]}), "p", 0)
    backend.append(source, pa.table({"key": ["c"], "n": [3]}), "p", 1)
    writer = foreach_batch_writer(backend, target, app_id="gold_q", mode="merge", keys=["key"])

    _run(
        read_delta_stream(core_spark, source, max_files_per_trigger=1),
        warehouse.checkpoint("g"),
        writer,
    )

    assert sorted(backend.read(target).to_pylist(), key=lambda r: r["key"]) == [
        {"key": "a", "n": 1},
        {"key": "b", "n": 2},
        {"key": "c", "n": 3},
    ]


def test_writer_rejects_merge_without_keys(backend: DeltaRsBackend, warehouse: Warehouse) -> None:
    with pytest.raises(ValueError, match="key"):
        foreach_batch_writer(backend, warehouse.table_uri("gold", "x"), "q", mode="merge")
