"""Where tables live: a local folder or an S3-compatible object store, one way to reach either.

A :class:`Storage` is a root URI plus the object-store settings delta-rs takes
(``AWS_ENDPOINT_URL``, ``AWS_REGION``, ...). Delta commits go through delta-rs
with those settings; data files are read and written through the matching
pyarrow filesystem, on the driver and in Spark tasks alike (the object is
plain data and travels to executors inside the data sources that need it).
Spark itself never opens a table path: it has no S3 filesystem here.
"""

from __future__ import annotations

import functools
import os
import re
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

__all__ = ["LOCAL_FILES", "SCHEMES", "Storage", "StorageError", "storage_for"]

SCHEMES = ("file", "s3")
"""Warehouse locations this project reads and writes (s3 covers S3-compatible stores)."""


class StorageError(OSError):
    """The warehouse location is unsupported, unreachable or not writable."""


def _upper(options: Mapping[str, str]) -> dict[str, str]:
    return {key.upper(): value for key, value in options.items()}


def _endpoint(options: Mapping[str, str]) -> str | None:
    return options.get("AWS_ENDPOINT_URL_S3") or options.get("AWS_ENDPOINT_URL")


_TRUE = ("1", "true", "on", "yes", "y")  # what delta-rs (object_store) reads as true
# pyarrow reports a store's failure as "... AWS Error <CODE> during <Op> operation: <detail>".
_AWS_ERROR = re.compile(r"AWS Error (\w+) during \w+ operation: ([^;\n]*)")


@functools.cache
def _s3(frozen_options: tuple[tuple[str, str], ...]) -> pafs.FileSystem:
    options = dict(frozen_options)
    endpoint = _endpoint(options)
    settings: dict[str, Any] = {
        "access_key": options.get("AWS_ACCESS_KEY_ID"),
        "secret_key": options.get("AWS_SECRET_ACCESS_KEY"),
        "session_token": options.get("AWS_SESSION_TOKEN"),
        "region": options.get("AWS_REGION") or options.get("AWS_DEFAULT_REGION"),
    }
    if endpoint:
        parsed = urlparse(endpoint)
        settings["endpoint_override"] = endpoint
        settings["scheme"] = parsed.scheme or "https"
    return pafs.S3FileSystem(**{k: v for k, v in settings.items() if v is not None})


@dataclass(frozen=True, repr=False)
class Storage:
    """A warehouse root and how to reach it.

    Attributes:
        root: ``s3://bucket/prefix``, or an absolute local path.
        options: object-store settings as delta-rs names them (empty for local folders).
    """

    root: str
    options: dict[str, str] = field(default_factory=dict)

    def __repr__(self) -> str:
        """The root only: options may hold secrets."""
        return f"Storage({self.root!r})"

    @property
    def scheme(self) -> str:
        """``file`` or ``s3``."""
        return urlparse(self.root).scheme or "file"

    @property
    def local(self) -> bool:
        """Whether tables are local folders."""
        return self.scheme == "file"

    @property
    def bucket(self) -> str:
        """The bucket of an object store's root (empty for local folders)."""
        return "" if self.local else urlparse(self.root).netloc

    def uri(self, *parts: str) -> str:
        """``root/part/...``."""
        return "/".join([self.root.rstrip("/"), *parts])

    @property
    def filesystem(self) -> pafs.FileSystem:
        """The pyarrow filesystem of the root (cached per process)."""
        if self.local:
            return pafs.LocalFileSystem()
        return _s3(tuple(sorted(_upper(self.options).items())))

    def fs_path(self, uri: str) -> str:
        """``uri`` as the filesystem's path (``bucket/key`` for S3)."""
        parsed = urlparse(uri)
        if parsed.scheme in ("", "file"):
            return parsed.path if parsed.scheme else uri
        return f"{parsed.netloc}{parsed.path}"

    def delta_options(self) -> dict[str, str] | None:
        """``storage_options`` for delta-rs (None for local folders)."""
        return None if self.local else dict(self.options)

    def _error(self, exc: BaseException, what: str) -> StorageError:
        """One line naming the root, ``what`` failed and why, for a store's error ``exc``."""
        text = (getattr(exc, "strerror", None) or str(exc) or type(exc).__name__).splitlines()[0]
        match = _AWS_ERROR.search(text)
        if match is None:
            reason = text
        elif match.group(1) == "NETWORK_CONNECTION":
            reason = f"cannot connect to {_endpoint(_upper(self.options)) or 'S3'}"
        elif match.group(1) == "NO_SUCH_BUCKET":
            reason = f"bucket {self.bucket!r} does not exist"
        else:
            reason = f"{match.group(1)}: {match.group(2).strip()}"
        return StorageError(f"warehouse {self.root} {what}: {reason}")

    def check_bucket(self) -> None:
        """Check that an object store's bucket exists (nothing to check for local folders).

        Raises:
            StorageError: the bucket does not exist, or the store cannot be reached.
        """
        if self.local:
            return
        if not self.exists(self.bucket):
            raise StorageError(f"warehouse {self.root}: bucket {self.bucket!r} does not exist")

    def exists(self, uri: str) -> bool:
        """Whether a file or folder is at ``uri``.

        Raises:
            StorageError: the store cannot be reached or refuses the request.
        """
        try:
            info = self.filesystem.get_file_info(self.fs_path(uri))
        except OSError as exc:
            raise self._error(exc, "cannot be read") from None
        return info.type != pafs.FileType.NotFound

    def list_dir(self, uri: str) -> list[str]:
        """Names of the entries directly under ``uri`` (none if it does not exist).

        Raises:
            StorageError: the store cannot be reached or refuses the request.
        """
        selector = pafs.FileSelector(self.fs_path(uri), allow_not_found=True)
        try:
            infos = self.filesystem.get_file_info(selector)
        except OSError as exc:
            raise self._error(exc, "cannot be listed") from None
        return sorted(info.base_name for info in infos)

    def read_text(self, uri: str) -> str:
        """The whole file as UTF-8.

        Raises:
            FileNotFoundError: nothing is at ``uri`` (whatever the store's own error).
        """
        try:
            with self.filesystem.open_input_stream(self.fs_path(uri)) as stream:
                return bytes(stream.read()).decode("utf-8")
        except OSError:
            if not self.exists(uri):
                raise FileNotFoundError(uri) from None
            raise

    def parquet_file(self, uri: str) -> pq.ParquetFile:
        """A Parquet file to read in batches."""
        return pq.ParquetFile(self.fs_path(uri), filesystem=self.filesystem)

    def write_parquet(self, folder: str, name: str, data: pa.Table | pa.RecordBatch) -> int:
        """Write ``data`` to ``folder/name`` whole or not at all; returns its size in bytes."""
        table = pa.Table.from_batches([data]) if isinstance(data, pa.RecordBatch) else data
        with self.parquet_writer(folder, name, table.schema) as writer:
            writer.write_table(table)
        return self.size(f"{folder}/{name}")

    @contextmanager
    def parquet_writer(self, folder: str, name: str, schema: pa.Schema) -> Iterator[pq.ParquetWriter]:
        """A writer of ``folder/name``; the file appears (whole) when the block ends without error.

        A local file is written under a hidden temporary name and renamed. An
        object store shows an upload once it completes; one cut short by an
        error is never read, since only a Delta commit makes a file part of a
        table and a retry writes the same name again.
        """
        target = self.fs_path(f"{folder}/{name}")
        if not self.local:
            with self.filesystem.open_output_stream(target) as stream:
                writer = pq.ParquetWriter(stream, schema, compression="snappy")
                yield writer
                writer.close()
            return
        Path(target).parent.mkdir(parents=True, exist_ok=True)
        partial = Path(target).with_name(f".{name}.{uuid.uuid4().hex}.tmp")
        writer = pq.ParquetWriter(partial, schema, compression="snappy")
        try:
            yield writer
            writer.close()
            os.replace(partial, target)
        finally:
            writer.close()
            partial.unlink(missing_ok=True)

    def size(self, uri: str) -> int:
        """Bytes of the file at ``uri``."""
        return int(self.filesystem.get_file_info(self.fs_path(uri)).size)

    def check_writable(self) -> None:
        """Write and delete a probe object under the root.

        Raises:
            StorageError: naming the root and what went wrong.
        """
        probe = self.fs_path(self.uri(f".write-probe-{uuid.uuid4().hex}"))
        try:
            if self.local:
                Path(probe).parent.mkdir(parents=True, exist_ok=True)
            with self.filesystem.open_output_stream(probe) as stream:
                stream.write(b"")
            self.filesystem.delete_file(probe)
        except (OSError, pa.ArrowException) as exc:
            raise self._error(exc, "is not writable") from None


LOCAL_FILES = Storage("/")
"""Local files at absolute paths: the storage of a table given by its folder alone."""


def _check_http(location: str, options: Mapping[str, str]) -> None:
    # delta-rs refuses a plain-HTTP endpoint unless AWS_ALLOW_HTTP is true, while
    # pyarrow takes it: say so before the first write instead of at the first commit.
    endpoint = _endpoint(options) or ""
    allowed = options.get("AWS_ALLOW_HTTP", "").strip().lower() in _TRUE
    if urlparse(endpoint).scheme == "http" and not allowed:
        raise StorageError(f"warehouse {location}: endpoint {endpoint} is plain HTTP; set "
                           "AWS_ALLOW_HTTP=true (environment or warehouse.storage_options) "
                           "to allow it")  # fmt: skip


def storage_for(location: str, options: Mapping[str, str]) -> Storage:
    """The storage of a warehouse location: a local path (made absolute) or an object store.

    Raises:
        StorageError: a scheme this project does not read and write, an S3 location
            without a bucket, or a plain-HTTP endpoint that delta-rs would refuse.
    """
    scheme = urlparse(location).scheme
    if len(scheme) > 1 and scheme not in SCHEMES:  # one letter: a Windows drive
        raise StorageError(f"warehouse {location}: unsupported scheme {scheme!r} "
                           f"(use a local path or {', '.join(s + '://' for s in SCHEMES[1:])})")  # fmt: skip
    if scheme == "s3":
        if not urlparse(location).netloc:
            raise StorageError(f"warehouse {location}: no bucket (use s3://bucket/prefix)")
        _check_http(location, _upper(options))
        return Storage(location.rstrip("/"), dict(options))
    path = urlparse(location).path if scheme == "file" else location
    # Absolute, so Spark executors and delta-rs agree whatever their working directory.
    return Storage(str(Path(path).expanduser().absolute()))
