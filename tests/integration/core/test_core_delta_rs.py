"""delta-rs backend: idempotent appends, replacements and merges with application transactions."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from deltalake import CommitProperties, DeltaTable, Transaction, write_deltalake

from core.storage import LOCAL_FILES
from core.tables import DeltaRsBackend, TableBackend
from core.tables.base import TableError
from core.tables.delta_log import snapshot_files
from core.warehouse import Warehouse

Events = Callable[[int, int], pa.Table]


def _ids(backend: DeltaRsBackend, path: object) -> list[int]:
    return sorted(backend.read(path).column("id").to_pylist())


def test_backend_satisfies_the_protocol(backend: DeltaRsBackend) -> None:
    assert isinstance(backend, TableBackend)


def test_append_records_the_batch_and_a_replay_is_skipped(
    backend: DeltaRsBackend, warehouse: Warehouse, events: Events
) -> None:
    path = warehouse.table_uri("bronze", "raw_events")
    assert backend.append(path, events(0, 3), app_id="bronze-q", batch_id=0)
    assert backend.append(path, events(3, 3), app_id="bronze-q", batch_id=1)
    version, before = backend.version(path), _ids(backend, path)

    assert not backend.append(path, events(100, 3), app_id="bronze-q", batch_id=1)  # replay
    assert not backend.append(path, events(200, 3), app_id="bronze-q", batch_id=0)  # older

    assert backend.version(path) == version == 1
    assert _ids(backend, path) == before == list(range(6))
    assert backend.transaction_version(path, "bronze-q") == 1


def test_another_app_id_writes_the_same_batch_id(
    backend: DeltaRsBackend, warehouse: Warehouse, events: Events
) -> None:
    path = warehouse.table_uri("bronze", "raw_events")
    backend.append(path, events(0, 2), app_id="query-a", batch_id=5)

    assert backend.append(path, events(2, 2), app_id="query-b", batch_id=5)

    assert _ids(backend, path) == [0, 1, 2, 3]
    assert DeltaTable(str(path)).transaction_version("query-a") == 5
    assert DeltaTable(str(path)).transaction_version("query-b") == 5


def test_replace_swaps_the_matching_partitions_and_skips_a_replay(
    backend: DeltaRsBackend, warehouse: Warehouse
) -> None:
    path = warehouse.table_uri("gold", "worker_load")
    columns = ["run", "window", "n"]

    def rows(*values: tuple[str, int, int]) -> pa.Table:
        return pa.table(dict(zip(columns, zip(*values, strict=True), strict=True)))

    first = rows(("r'1", 0, 1), ("r'1", 60, 2), ("r2", 0, 3))
    assert backend.replace(path, first, {"run": ["r'1", "r2"], "window": [0, 60]}, "q", 0,
                           ["run", "window"])  # fmt: skip
    assert backend.replace(path, rows(("r'1", 60, 20), ("r'1", 120, 30)),
                           {"run": ["r'1"], "window": [60, 120]}, "q", 1)  # fmt: skip
    version = backend.version(path)
    assert not backend.replace(path, rows(("r'1", 0, 999)), {"run": ["r'1"], "window": [0]},
                               "q", 1)  # a replay  # fmt: skip

    got = sorted(tuple(r.values()) for r in backend.read(path).select(columns).to_pylist())
    assert got == [("r'1", 0, 1), ("r'1", 60, 20), ("r'1", 120, 30), ("r2", 0, 3)]
    assert backend.version(path) == version
    assert DeltaTable(str(path)).metadata().partition_columns == ["run", "window"]


def _log_rows(path: object, columns: list[str]) -> list[tuple]:
    """The table's rows as the project's own log reader finds them: files and partition values."""
    rows = []
    for added in snapshot_files(LOCAL_FILES, str(path)):
        data = pq.read_table(added.path).to_pylist()
        rows += [tuple({**row, **added.partition_values}[c] for c in columns) for row in data]
    return sorted(rows)


def test_partitioned_writes_are_read_alike_by_delta_rs_and_the_log(
    backend: DeltaRsBackend, warehouse: Warehouse
) -> None:
    # Appends and whole-partition replacements of a partitioned table write their own
    # files; the oracle is the list of rows each write leaves, kept here by hand.
    path = warehouse.table_uri("gold", "hot_keys")
    columns = ["run", "window", "key", "n"]
    schema = pa.schema([("run", pa.string()), ("window", pa.int64()), ("key", pa.string()),
                        ("n", pa.int64())])  # fmt: skip

    def rows(*values: tuple[str, int, str, int]) -> pa.Table:
        return pa.Table.from_pylist([dict(zip(columns, v, strict=True)) for v in values], schema)

    odd = "a/b=c %d'"  # a run id no folder name could hold as it is
    assert backend.append(path, rows(("r", 0, "x", 1), (odd, 0, "y", 2)), "q", 0, ["run", "window"])
    assert backend.append(path, rows(("r", 60, "x", 3), ("r", 60, "z", 4)), "q", 1)
    assert backend.replace(path, rows(("r", 60, "x", 30), ("r", 120, "x", 5)),
                           {"run": ["r"], "window": [0, 60, 120]}, "q", 2)  # fmt: skip
    assert not backend.append(path, rows(("r", 0, "x", 999)), "q", 2)  # a replay
    expected = [(odd, 0, "y", 2), ("r", 60, "x", 30), ("r", 120, "x", 5)]

    for table in (backend.read(path), DeltaTable(str(path)).to_pyarrow_table()):
        assert sorted(tuple(r.values()) for r in table.select(columns).to_pylist()) == expected
    assert _log_rows(path, columns) == expected
    adds = pa.table(DeltaTable(str(path)).get_add_actions(flatten=True)).to_pydict()
    assert sorted(adds["num_records"]) == [1, 1, 1]  # one file per partition, rows counted
    assert backend.transaction_version(path, "q") == 2 and backend.version(path) == 2


@pytest.mark.parametrize(
    "runs", [["r"] * 5, ["r", "s", "r", "s", "r"]], ids=["one-run", "two-runs"]
)
def test_each_partition_of_a_write_gets_a_file_a_null_one_too(
    backend: DeltaRsBackend, warehouse: Warehouse, runs: list[str]
) -> None:
    path = warehouse.table_uri("gold", "worker_load")
    schema = pa.schema([("run", pa.string()), ("window", pa.int64()), ("n", pa.int64())])
    backend.create_if_missing(path, schema, ["run", "window"])
    windows = [0, None, 60, 0, None]
    rows = pa.table({"run": runs, "window": windows, "n": [1, 2, 3, 4, 5]}, schema)
    assert backend.append(path, rows, "q", 0)
    expected = sorted(zip(runs, windows, [1, 2, 3, 4, 5], strict=True), key=str)
    got = DeltaTable(str(path)).to_pyarrow_table().select(["run", "window", "n"]).to_pylist()
    assert sorted((tuple(r.values()) for r in got), key=str) == expected
    partitions = {(run, window) for run, window, _ in expected}
    assert len(snapshot_files(LOCAL_FILES, str(path))) == len(partitions)


def test_a_partitioned_write_with_other_columns_is_refused(
    backend: DeltaRsBackend, warehouse: Warehouse
) -> None:
    path = warehouse.table_uri("gold", "worker_load")
    first = pa.table({"run": ["r"], "window": [0], "n": [1]})
    backend.append(path, first, "q", 0, ["run", "window"])
    with pytest.raises(TableError, match="not the table's"):
        backend.append(path, pa.table({"run": ["r"], "window": [0], "m": [1]}), "q", 1)
    assert backend.version(path) == 0


def test_a_replacement_beyond_the_partitions_matches_rows(
    backend: DeltaRsBackend, warehouse: Warehouse
) -> None:
    path = warehouse.table_uri("gold", "key_counts")
    first = pa.table({"run": ["r", "r", "s"], "window": [0, 60, 0], "n": [1, 2, 3]})
    backend.append(path, first, "q", 0, ["run"])
    assert backend.replace(path, pa.table({"run": ["r"], "window": [60], "n": [20]}),
                           {"run": ["r"], "window": [60]}, "q", 1)  # fmt: skip
    got = sorted(tuple(r.values()) for r in backend.read(path).to_pylist())
    assert got == [("r", 0, 1), ("r", 60, 20), ("s", 0, 3)]


def test_delete_removes_the_matching_rows_only(backend: DeltaRsBackend, warehouse: Warehouse) -> None:
    path = warehouse.table_uri("silver", "routed")
    backend.append(path, pa.table({"run_id": ["r", "s", "r", "o'k"], "n": [1, 2, 3, 4]}), "q", 0)
    backend.delete(path, {"run_id": ["r", "o'k"]})
    assert backend.read(path).to_pylist() == [{"run_id": "s", "n": 2}]
    backend.delete(path, {"run": ["s"]})  # a table without the column has no such rows
    backend.delete(warehouse.table_uri("silver", "missing"), {"run_id": ["s"]})
    assert backend.read(path).to_pylist() == [{"run_id": "s", "n": 2}]
    assert backend.version(warehouse.table_uri("silver", "missing")) is None


def test_merge_upserts_by_key_and_skips_a_replay(
    backend: DeltaRsBackend, warehouse: Warehouse
) -> None:
    path = warehouse.table_uri("gold", "key_counts")
    first = pa.table({"runId": ["r1", "r1"], "key": ["a", "b"], "total": [1, 2]})
    second = pa.table({"runId": ["r1", "r1"], "key": ["b", "c"], "total": [20, 30]})

    assert backend.merge(path, first, keys=["runId", "key"], app_id="gold-q", batch_id=0)
    assert backend.merge(path, second, keys=["runId", "key"], app_id="gold-q", batch_id=1)
    version = backend.version(path)
    assert not backend.merge(
        path,
        pa.table({"runId": ["r1"], "key": ["a"], "total": [999]}),
        ["runId", "key"],
        "gold-q",
        1,
    )

    rows = sorted(backend.read(path).to_pylist(), key=lambda r: r["key"])
    assert rows == [
        {"runId": "r1", "key": "a", "total": 1},
        {"runId": "r1", "key": "b", "total": 20},
        {"runId": "r1", "key": "c", "total": 30},
    ]
    assert backend.version(path) == version
    assert backend.transaction_version(path, "gold-q") == 1


def test_pandas_input_and_non_null_columns_become_nullable(
    backend: DeltaRsBackend, warehouse: Warehouse
) -> None:
    path = warehouse.table_uri("silver", "routed")
    strict = pa.schema([pa.field("key", pa.string(), nullable=False)])
    backend.append(path, pa.table({"key": ["a"]}, schema=strict), "q", 0)

    backend.append(path, pd.DataFrame({"key": [None, "b"]}), "q", 1)

    keys = backend.read(path).column("key").to_pylist()
    assert sorted(keys, key=lambda k: k or "") == [None, "a", "b"]


def test_empty_batch_creates_the_table_without_a_commit(
    backend: DeltaRsBackend, warehouse: Warehouse, events: Events
) -> None:
    path = warehouse.table_uri("silver", "quarantine")

    assert not backend.append(path, events(0, 0), "q", 0)
    assert backend.version(path) == 0
    assert not backend.append(path, events(0, 0), "q", 1)

    assert backend.version(path) == 0
    assert backend.read(path).num_rows == 0


def test_create_if_missing_is_idempotent_and_partitioned(
    backend: DeltaRsBackend, warehouse: Warehouse
) -> None:
    path = warehouse.table_uri("gold", "runs")
    schema = pa.schema([("run_id", pa.string()), ("status", pa.string())])

    assert backend.create_if_missing(path, schema, partition_by=["run_id"])
    assert not backend.create_if_missing(path, schema, partition_by=["run_id"])

    assert DeltaTable(str(path)).metadata().partition_columns == ["run_id"]
    assert backend.version(path) == 0


def test_version_of_a_missing_table_is_none(backend: DeltaRsBackend, warehouse: Warehouse) -> None:
    assert backend.version(warehouse.table_uri("gold", "nothing")) is None


@pytest.mark.parametrize("keys", [[], ()])
def test_merge_needs_keys(backend: DeltaRsBackend, warehouse: Warehouse, keys: list[str]) -> None:
    with pytest.raises(ValueError, match="key"):
        backend.merge(warehouse.table_uri("gold", "x"), pa.table({"a": [1]}), keys, "q", 0)


def test_added_files_become_visible_only_with_their_commit(
    backend: DeltaRsBackend, warehouse: Warehouse, events: Events
) -> None:
    import pyarrow.parquet as pq

    from core.tables.base import DataFile

    path = Path(warehouse.table_uri("bronze", "landed"))
    backend.create_if_missing(path, events(0, 1).schema)
    files = []
    for start in (0, 10):
        name = f"part-{start}.parquet"
        pq.write_table(events(start, 4), path / name)
        files.append(DataFile(name, (path / name).stat().st_size, 4))
    pq.write_table(events(100, 4), path / "never-committed.parquet")

    assert backend.add_files(path, files, app_id="land", batch_id=0)
    assert not backend.add_files(path, files, app_id="land", batch_id=0)  # replay
    assert not backend.add_files(path, [], app_id="land", batch_id=1)  # nothing landed

    assert _ids(backend, path) == [0, 1, 2, 3, 10, 11, 12, 13]
    assert backend.version(path) == 1
    assert backend.transaction_version(path, "land") == 0
    stats = pa.table(DeltaTable(str(path)).get_add_actions(flatten=True)).to_pydict()
    assert stats["num_records"] == [4, 4]


def test_adding_files_to_a_missing_table_is_an_error(
    backend: DeltaRsBackend, warehouse: Warehouse
) -> None:
    from core.tables import TableError
    from core.tables.base import DataFile

    with pytest.raises(TableError, match="no Delta table"):
        backend.add_files(warehouse.table_uri("bronze", "nowhere"), [DataFile("a", 1, 1)], "x", 0)


def test_the_backend_follows_other_writers_and_a_replaced_table(tmp_path):
    import shutil

    from deltalake import write_deltalake

    backend, path = DeltaRsBackend(), tmp_path / "t"
    rows = pa.table({"a": [1, 2]})
    write_deltalake(str(path), rows, mode="append")
    assert backend.version(path) == 0
    write_deltalake(str(path), rows, mode="append")  # another writer commits
    assert backend.version(path) == 1
    assert backend.read(path).num_rows == 4
    shutil.rmtree(path)
    assert backend.version(path) is None
    write_deltalake(str(path), rows.slice(0, 1), mode="append")  # a new table in its place
    assert backend.version(path) == 0
    assert backend.read(path).num_rows == 1


def test_the_last_batch_follows_other_writers_of_the_same_app_id(
    warehouse: Warehouse, events: Events
) -> None:
    # Each backend remembers the batches it committed; another writer's commit of the
    # same application id must not be hidden behind that memory.
    path = warehouse.table_uri("silver", "routed")
    ours, theirs = DeltaRsBackend(), DeltaRsBackend()
    writes = [(ours, 0), (ours, 1), (theirs, 2), (ours, 2), (ours, 3), (theirs, 3),
              (theirs, 4), (ours, 5)]  # fmt: skip
    for writer, batch in writes:
        writer.append(path, events(batch * 10, 2), app_id="q", batch_id=batch)
        truth = DeltaTable(str(path)).transaction_version("q")
        assert ours.transaction_version(path, "q") == theirs.transaction_version(path, "q") == truth
    # Batches 2 and 3 were each written once, by whichever backend came first.
    assert _ids(ours, path) == sorted(i for b in range(6) for i in (b * 10, b * 10 + 1))
    write_deltalake(str(path), events(99, 1), mode="append",
                    commit_properties=CommitProperties(app_transactions=[Transaction("q", 9)]))  # fmt: skip
    assert not ours.append(path, events(60, 2), app_id="q", batch_id=6)  # 9 is recorded now


def test_a_table_held_between_commits_is_loaded_afresh_every_so_many_versions(
    backend: DeltaRsBackend, warehouse: Warehouse, events: Events, monkeypatch
) -> None:
    import core.tables.delta_rs as delta_rs

    monkeypatch.setattr(delta_rs, "_COMMITS_PER_LOAD", 5)
    path = warehouse.table_uri("bronze", "raw_events")
    # The objects themselves are kept: an id alone may be reused once its object is freed.
    held, followed, commits = [], [], 0
    for batch in range(23):
        assert backend.append(path, events(batch * 2, 2), app_id="q", batch_id=batch)
        commits += 1
        if batch % 3 == 0:  # another writer's commit, followed by update_incremental
            write_deltalake(str(path), events(1000 + batch, 1), mode="append")
            commits += 1
        assert backend.version(path) == commits - 1
        table = backend._tables[str(path)]
        held.append(table)
        followed.append(table.version() - backend._loaded_at[str(path)])
    assert max(followed) <= 5  # never more commits than the limit kept in one object
    assert len({id(table) for table in held}) >= 5  # loaded afresh: 31 versions, 5 at a time
    assert backend.version(path) == DeltaTable(str(path)).version() == 30
    assert backend.transaction_version(path, "q") == 22
    assert _ids(backend, path) == sorted([*range(46), *(1000 + b for b in range(0, 23, 3))])


@pytest.mark.parametrize("create", ["create_if_missing", "first_append"])
def test_tables_are_checkpointed_every_ten_commits(
    backend: DeltaRsBackend, warehouse: Warehouse, events: Events, create: str
) -> None:
    # Delta's default interval: a commit replays the log since the last checkpoint.
    path = warehouse.table_uri("silver", "routed")
    if create == "create_if_missing":
        backend.create_if_missing(path, events(0, 1).schema)
    for batch in range(12):
        backend.append(path, events(batch, 1), app_id="q", batch_id=batch)
    log = Path(path) / "_delta_log"
    checkpoints = sorted(p.name for p in log.glob("*.checkpoint.parquet"))
    assert checkpoints == ["00000000000000000009.checkpoint.parquet"]  # after the tenth commit
    assert _ids(backend, path) == list(range(12))
