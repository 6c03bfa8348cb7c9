"""A warehouse that cannot be used says why in one line, and a check leaves nothing behind."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.storage import StorageError, probe_folder, storage_for
from core.warehouse import Warehouse, WarehouseError


def test_a_file_as_the_warehouse_is_named_a_file(tmp_path: Path) -> None:
    (tmp_path / "some-file.txt").write_text("x")
    with pytest.raises(WarehouseError) as caught:
        Warehouse(tmp_path / "some-file.txt")
    assert str(caught.value) == f"warehouse {tmp_path}/some-file.txt is a file, not a folder"


def test_a_file_above_the_warehouse_is_named(tmp_path: Path) -> None:
    (tmp_path / "plain-file").write_text("x")
    with pytest.raises(WarehouseError) as caught:
        Warehouse(tmp_path / "plain-file" / "a" / "wh")
    assert str(caught.value) == (f"warehouse {tmp_path}/plain-file/a/wh is not writable: "
                                 f"{tmp_path}/plain-file is a file, not a folder")  # fmt: skip


def test_a_state_folder_that_is_a_file_is_named(tmp_path: Path) -> None:
    (tmp_path / "state").write_text("x")
    with pytest.raises(WarehouseError, match=r"state folder .*/state: .*/state is a file, not a folder"):
        Warehouse(tmp_path / "wh", state_dir=tmp_path / "state")


def test_checking_a_new_warehouse_creates_nothing(tmp_path: Path) -> None:
    # A command that fails after the check (an unreachable Kafka) leaves no empty folders.
    warehouse = Warehouse(tmp_path / "a" / "wh", state_dir=tmp_path / "b" / "state")
    assert list(tmp_path.iterdir()) == []
    assert Path(warehouse.checkpoint("q")).parent.is_dir()  # made when first needed
    assert Path(warehouse.job_runs("job")).is_dir()


def test_the_probe_leaves_an_existing_folder_as_it_was(tmp_path: Path) -> None:
    (tmp_path / "kept").write_text("x")
    probe_folder(tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == ["kept"]


def _aws_error(code: str, detail: str) -> OSError:
    # pyarrow's text for a store's failure, as check_writable and exists see it.
    return OSError(f"When initiating multiple part upload for key 'wh/.probe' in bucket 'b': "
                   f"AWS Error {code} during CreateMultipartUpload operation: {detail}")  # fmt: skip


KEYS = {"AWS_ACCESS_KEY_ID": "id", "AWS_SECRET_ACCESS_KEY": "secret"}
LOCAL_S3 = {"AWS_ENDPOINT_URL": "http://127.0.0.1:9000", "AWS_ALLOW_HTTP": "true"}


@pytest.mark.parametrize(("options", "code", "reason"), [
    # No AWS_* at all: AWS itself, unreachable from here.
    ({}, "NETWORK_CONNECTION", "cannot connect to AWS S3; AWS_ACCESS_KEY_ID and "
     "AWS_SECRET_ACCESS_KEY are not set, nor AWS_ENDPOINT_URL for an S3-compatible server (with "
     "AWS_ALLOW_HTTP=true if it is plain http) (environment or warehouse.storage_options)"),
    (LOCAL_S3, "ACCESS_DENIED", "ACCESS_DENIED: No response body.; AWS_ACCESS_KEY_ID and "
     "AWS_SECRET_ACCESS_KEY are not set (environment or warehouse.storage_options)"),
    (KEYS, "NETWORK_CONNECTION", "cannot connect to AWS S3; for an S3-compatible server set "
     "AWS_ENDPOINT_URL (with AWS_ALLOW_HTTP=true if it is plain http) (environment or "
     "warehouse.storage_options)"),
    # Everything set: the store's own reason alone.
    ({**KEYS, **LOCAL_S3}, "NETWORK_CONNECTION", "cannot connect to http://127.0.0.1:9000"),
    ({**KEYS, **LOCAL_S3}, "ACCESS_DENIED", "ACCESS_DENIED: No response body."),
    ({**KEYS, **LOCAL_S3}, "NO_SUCH_BUCKET", "bucket 'b' does not exist"),
    (LOCAL_S3, "NO_SUCH_BUCKET", "bucket 'b' does not exist; AWS_ACCESS_KEY_ID and "
     "AWS_SECRET_ACCESS_KEY are not set (environment or warehouse.storage_options)"),
])  # fmt: skip
def test_a_failing_store_names_the_settings_it_lacks(options, code, reason) -> None:
    storage = storage_for("s3://b/wh", options)
    error = storage._error(_aws_error(code, "No response body."), "is not writable")
    assert str(error) == f"warehouse s3://b/wh is not writable: {reason}"


@pytest.mark.parametrize(("given", "missing"), [
    ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"),
    ("aws_secret_access_key", "AWS_ACCESS_KEY_ID"),
])  # fmt: skip
def test_one_access_key_without_the_other_is_named(given, missing) -> None:
    with pytest.raises(StorageError) as caught:
        storage_for("s3://b/wh", {given: "x"})
    assert str(caught.value) == (f"warehouse s3://b/wh: {given.upper()} is set but not {missing} "
                                 "(environment or warehouse.storage_options)")  # fmt: skip
