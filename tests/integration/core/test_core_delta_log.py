"""Reading added files per commit straight from _delta_log (the stream source's basis)."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pyarrow.parquet as pq

from core.storage import LOCAL_FILES
from core.tables import DeltaRsBackend
from core.tables.delta_log import (
    AddedFile,
    latest_version,
    pack_files,
    read_commit,
    snapshot_files,
)
from core.warehouse import Warehouse


def test_each_commit_lists_only_its_own_files(
    backend: DeltaRsBackend, warehouse: Warehouse
) -> None:
    path = warehouse.table_uri("silver", "routed")
    day = dt.date(2024, 5, 1)
    backend.append(path, pa.table({"id": [1, 2], "day": [day, None]}), "q", 0, partition_by=["day"])
    backend.append(path, pa.table({"id": [3], "day": [day]}), "q", 1)
    types = {"day": pa.date32()}

    first, second = read_commit(LOCAL_FILES, path, 0, types), read_commit(LOCAL_FILES, path, 1, types)

    assert latest_version(LOCAL_FILES, path) == 1
    assert sorted(f.partition_values["day"] or dt.date.min for f in first.adds) == [
        dt.date.min,
        day,
    ]
    assert [pq.read_table(f.path).column("id").to_pylist() for f in second.adds] == [[3]]
    assert not first.removes_data and not second.removes_data
    assert {f.path for f in snapshot_files(LOCAL_FILES, path)} == {f.path for f in first.adds + second.adds}


def test_merge_commits_are_flagged_as_removing_rows(
    backend: DeltaRsBackend, warehouse: Warehouse
) -> None:
    path = warehouse.table_uri("gold", "key_counts")
    backend.merge(path, pa.table({"k": ["a"], "n": [1]}), ["k"], "q", 0)
    backend.merge(path, pa.table({"k": ["a"], "n": [2]}), ["k"], "q", 1)

    assert read_commit(LOCAL_FILES, path, 1, {}).removes_data


def test_latest_version_of_a_missing_table(warehouse: Warehouse) -> None:
    assert latest_version(warehouse.storage, warehouse.table_uri("gold", "none")) == -1


def test_pack_files_balances_bytes_and_keeps_log_order() -> None:
    files = [AddedFile(f"/f{i}", size) for i, size in enumerate([50, 10, 40, 10, 10])]

    groups = pack_files(files, min_partitions=2, target_bytes=1 << 30)

    assert sorted(sum(f.size for f in g) for g in groups) == [60, 60]
    assert all(list(g) == sorted(g, key=lambda f: int(f.path[2:])) for g in groups)
    assert pack_files([], 2) == []
