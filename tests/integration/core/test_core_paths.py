"""Warehouse layout: <root>/<layer>/<table>, <state>/_checkpoints/<query>; bad roots."""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pytest

from core.tables import DeltaRsBackend
from core.warehouse import Warehouse, WarehouseError


def test_layout_follows_design(tmp_path: Path) -> None:
    warehouse = Warehouse(tmp_path / "lakehouse")

    table = warehouse.table_uri("gold", "key_counts")
    checkpoint = warehouse.checkpoint("gold_key_counts")

    assert table == str(tmp_path / "lakehouse" / "gold" / "key_counts")
    assert checkpoint == str(tmp_path / "lakehouse" / "_checkpoints" / "gold_key_counts")
    assert Path(checkpoint).parent.is_dir()  # Spark expects the parent to exist


def test_object_storage_keeps_spark_state_in_a_local_folder(tmp_path: Path) -> None:
    # Only the layout: no object store is reached until something is read or written.
    from core.storage import storage_for
    from core.warehouse import default_state_dir

    storage = storage_for("s3://bucket/some/prefix", {})
    assert default_state_dir(storage) == Path(".dkg", "state", "s3", "bucket", "some", "prefix")
    assert storage.uri("gold", "runs") == "s3://bucket/some/prefix/gold/runs"


@pytest.mark.parametrize("allow", ["true", "1", "TRUE"])
def test_a_plain_http_endpoint_needs_allow_http_as_delta_rs_does(allow: str) -> None:
    from core.storage import StorageError, storage_for

    options = {"AWS_ENDPOINT_URL": "http://127.0.0.1:9000"}
    with pytest.raises(StorageError, match="plain HTTP; set AWS_ALLOW_HTTP=true"):
        storage_for("s3://bucket/prefix", options)
    assert storage_for("s3://bucket/prefix", {**options, "aws_allow_http": allow}).bucket == "bucket"
    assert storage_for("s3://bucket/prefix", {"AWS_ENDPOINT_URL": "https://s3.example"}).local is False


def test_relative_root_is_made_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert Warehouse(Path("lakehouse")).root == str(tmp_path / "lakehouse")


@pytest.mark.parametrize("name", ["", "..", "_checkpoints", "a/b", ".hidden"])
def test_rejects_names_that_escape_the_layout(tmp_path: Path, name: str) -> None:
    with pytest.raises(ValueError, match="invalid"):
        Warehouse(tmp_path).table_uri("gold", name)


def test_root_under_a_file_is_a_warehouse_error(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x")
    with pytest.raises(WarehouseError, match="not writable"):
        Warehouse(blocker / "lakehouse")


def test_an_unsupported_scheme_is_a_warehouse_error(tmp_path: Path) -> None:
    with pytest.raises(WarehouseError, match="unsupported scheme 'gs'"):
        Warehouse("gs://bucket/wh")


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
        warehouse.table_uri("gold", "key_counts"), pa.schema([("k", pa.string())])
    )
    Path(warehouse.table_uri("silver", "not_yet")).mkdir(parents=True)
    Path(warehouse.checkpoint("q")).mkdir()

    assert [(layer, table) for layer, table, _ in warehouse.tables()] == [("gold", "key_counts")]
