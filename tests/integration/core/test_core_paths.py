"""Warehouse layout: <root>/<layer>/<table>, <root>/_checkpoints/<query>."""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pytest

from core.tables import DeltaRsBackend
from core.warehouse import Warehouse, WarehouseError


def test_layout_follows_design(tmp_path: Path) -> None:
    warehouse = Warehouse(tmp_path / "lakehouse")

    table = warehouse.table_path("gold", "key_counts")
    checkpoint = warehouse.checkpoint("gold_key_counts")

    assert table == tmp_path / "lakehouse" / "gold" / "key_counts"
    assert table.parent.is_dir()
    assert checkpoint == tmp_path / "lakehouse" / "_checkpoints" / "gold_key_counts"
    assert checkpoint.parent.is_dir()


def test_relative_root_is_made_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert Warehouse(Path("lakehouse")).root == tmp_path / "lakehouse"


@pytest.mark.parametrize("name", ["", "..", "_checkpoints", "a/b", ".hidden"])
def test_rejects_names_that_escape_the_layout(tmp_path: Path, name: str) -> None:
    with pytest.raises(ValueError, match="invalid"):
        Warehouse(tmp_path).table_path("gold", name)


def test_root_under_a_file_is_a_warehouse_error(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x")
    with pytest.raises(WarehouseError, match="cannot create"):
        Warehouse(blocker / "lakehouse")


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes through permission bits")
def test_read_only_root_is_a_warehouse_error(tmp_path: Path) -> None:
    root = tmp_path / "ro"
    root.mkdir()
    root.chmod(0o500)
    try:
        with pytest.raises(WarehouseError, match="not writable"):
            Warehouse(root)
    finally:
        root.chmod(0o700)


def test_tables_lists_existing_delta_tables_only(tmp_path: Path) -> None:
    warehouse = Warehouse(tmp_path)
    backend = DeltaRsBackend()
    backend.create_if_missing(
        warehouse.table_path("gold", "key_counts"), pa.schema([("k", pa.string())])
    )
    warehouse.table_path("silver", "not_yet").mkdir()
    warehouse.checkpoint("q").mkdir()

    assert [(layer, table) for layer, table, _ in warehouse.tables()] == [("gold", "key_counts")]
