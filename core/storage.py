"""Where tables live: a local folder or an S3-compatible object store, one way to reach either.

A :class:`Storage` is a root URI plus the object-store settings delta-rs takes
(``AWS_ENDPOINT_URL``, ``AWS_REGION``, ...). Delta commits go through delta-rs
with those settings; data files are read and written through the matching
pyarrow filesystem, on the driver and in Spark tasks alike (the object is
plain data and travels to executors inside the data sources that need it).
Spark itself never opens a table path: it has no S3 filesystem here.
"""

from __future__ import annotations

import contextlib
import errno
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

from core.errors import DkgError

__all__ = ["LOCAL_FILES", "SCHEMES", "Storage", "StorageError", "file_in_the_way", "probe_folder",
           "storage_for"]

SCHEMES = ("file", "s3")
"""Warehouse locations this project reads and writes (s3 covers S3-compatible stores)."""


class StorageError(DkgError, OSError):
    """The warehouse location is unsupported, unreachable or not writable."""


def _upper(options: Mapping[str, str]) -> dict[str, str]:
    return {key.upper(): value for key, value in options.items()}


def _endpoint(options: Mapping[str, str]) -> str | None:
    return options.get("AWS_ENDPOINT_URL_S3") or options.get("AWS_ENDPOINT_URL")


_TRUE = ("1", "true", "on", "yes", "y")  # what delta-rs (object_store) reads as true
# pyarrow reports a store's failure as "... AWS Error <CODE> during <Op> operation: <detail>".
_AWS_ERROR = re.compile(r"AWS Error (\w+) during \w+ operation: ([^;\n]*)")
_KEYS = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")
_WHERE = "environment or warehouse.storage_options"


def _missing_settings(options: Mapping[str, str], connect_failed: bool) -> str:
    """Advice naming the settings a failing store's ``options`` lack ('' when none is missing).

    Credentials may also come from an AWS profile or an instance role, which
    this cannot see: the advice says what is not set, not what is wrong.
    """
    no_keys = not all(options.get(key) for key in _KEYS)
    no_endpoint = _endpoint(options) is None
    if no_keys and no_endpoint:
        return (f"; {' and '.join(_KEYS)} are not set, nor AWS_ENDPOINT_URL for an S3-compatible "
                f"server (with AWS_ALLOW_HTTP=true if it is plain http) ({_WHERE})")  # fmt: skip
    if no_keys:
        return f"; {' and '.join(_KEYS)} are not set ({_WHERE})"
    if no_endpoint and connect_failed:
        return (f"; for an S3-compatible server set AWS_ENDPOINT_URL (with AWS_ALLOW_HTTP=true "
                f"if it is plain http) ({_WHERE})")  # fmt: skip
    return ""


def file_in_the_way(path: Path) -> Path | None:
    """The file at ``path`` or at one of its parents, where a folder should be; None if none."""
    for folder in (path, *path.parents):
        if folder.is_dir():
            return None
        if folder.exists() or folder.is_symlink():
            return folder
    return None


def probe_folder(path: Path) -> None:
    """Write and delete a probe file in folder ``path``, leaving nothing behind.

    Folders created for the probe are removed again: a command that fails later
    (an unreachable Kafka, say) must not leave an empty warehouse behind. They
    are created again when something is written there.

    Raises:
        NotADirectoryError: ``path`` or one of its parents is a file (``filename``
            names which).
        OSError: the folder cannot be created or written.
    """
    blocking = file_in_the_way(path)
    if blocking is not None:
        raise NotADirectoryError(errno.ENOTDIR, "a file, not a folder", str(blocking))
    created: list[Path] = []
    try:
        for folder in (*reversed(path.parents), path):
            if not folder.is_dir():
                folder.mkdir()
                created.append(folder)
        probe = path / f".write-probe-{uuid.uuid4().hex}"
        probe.write_bytes(b"")
        probe.unlink()
    finally:
        for folder in reversed(created):
            with contextlib.suppress(OSError):  # another process wrote there meanwhile
                folder.rmdir()


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
        options = _upper(self.options)
        code = match.group(1) if match else ""
        if match is None:
            reason = text
        elif code == "NETWORK_CONNECTION":
            reason = f"cannot connect to {_endpoint(options) or 'AWS S3'}"
        elif code == "NO_SUCH_BUCKET":
            reason = f"bucket {self.bucket!r} does not exist"
        else:
            reason = f"{code}: {match.group(2).strip()}"
        if not self.local:
            reason += _missing_settings(options, code == "NETWORK_CONNECTION")
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
        options = {"compression": "snappy", "use_dictionary": _repeating_columns(schema)}
        if not self.local:
            with self.filesystem.open_output_stream(target) as stream:
                writer = pq.ParquetWriter(stream, schema, **options)
                yield writer
                writer.close()
            return
        Path(target).parent.mkdir(parents=True, exist_ok=True)
        partial = Path(target).with_name(f".{name}.{uuid.uuid4().hex}.tmp")
        writer = pq.ParquetWriter(partial, schema, **options)
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
        if self.local:
            self._check_local_writable()
            return
        probe = self.fs_path(self.uri(f".write-probe-{uuid.uuid4().hex}"))
        try:
            with self.filesystem.open_output_stream(probe) as stream:
                stream.write(b"")
            self.filesystem.delete_file(probe)
        except (OSError, pa.ArrowException) as exc:
            raise self._error(exc, "is not writable") from None

    def _check_local_writable(self) -> None:
        try:
            probe_folder(Path(self.root))
        except NotADirectoryError as exc:
            if exc.filename == self.root:
                raise StorageError(f"warehouse {self.root} is a file, not a folder") from None
            raise StorageError(f"warehouse {self.root} is not writable: {exc.filename} is a file, "
                               "not a folder") from None  # fmt: skip
        except OSError as exc:
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


def _check_keys(location: str, options: Mapping[str, str]) -> None:
    # pyarrow refuses one key without the other with a ValueError of its own.
    given = [key for key in _KEYS if options.get(key)]
    if len(given) == 1:
        (missing,) = set(_KEYS) - set(given)
        raise StorageError(f"warehouse {location}: {given[0]} is set but not {missing} ({_WHERE})")


def storage_for(location: str, options: Mapping[str, str]) -> Storage:
    """The storage of a warehouse location: a local path (made absolute) or an object store.

    Raises:
        StorageError: a scheme this project does not read and write, an S3 location
            without a bucket, a plain-HTTP endpoint that delta-rs would refuse, or
            one of the two access keys without the other.
    """
    scheme = urlparse(location).scheme
    if len(scheme) > 1 and scheme not in SCHEMES:  # one letter: a Windows drive
        raise StorageError(f"warehouse {location}: unsupported scheme {scheme!r} "
                           f"(use a local path or {', '.join(s + '://' for s in SCHEMES[1:])})")  # fmt: skip
    if scheme == "s3":
        if not urlparse(location).netloc:
            raise StorageError(f"warehouse {location}: no bucket (use s3://bucket/prefix)")
        _check_http(location, _upper(options))
        _check_keys(location, _upper(options))
        return Storage(location.rstrip("/"), dict(options))
    path = urlparse(location).path if scheme == "file" else location
    # Absolute, so Spark executors and delta-rs agree whatever their working directory.
    return Storage(str(Path(path).expanduser().absolute()))


def _repeating_columns(schema: pa.Schema) -> list[str]:
    """The columns worth a Parquet dictionary: names and small ids (strings, 32-bit ints).

    Offsets, times and payloads are nearly all distinct: a dictionary tried on them
    is thrown away at its size limit, and trying cost half of a bronze file's write
    (bronze rows: 0.40 -> 0.21 us each, and a smaller file).
    """
    return [f.name for f in schema if pa.types.is_string(f.type) or pa.types.is_int32(f.type)]
