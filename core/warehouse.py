"""Warehouse layout: ``<root>/<layer>/<table>`` on the warehouse's storage, state beside it.

Every table location comes from one :class:`Warehouse`, so no module spells a
path. Tables live on the warehouse's storage (a local folder or object storage).
What Spark itself must write, streaming checkpoints and its catalog's scratch
folders, and the run records of ``dkg job run``, live in the *state folder*: the
warehouse root itself when it is local, otherwise a local folder
(``warehouse.state_dir``; on a cluster it must be shared with the executors,
which write state-store files there). Spark has no S3 filesystem here, so it
cannot keep checkpoints in object storage.

Names are single path segments (letters, digits, ``_``, ``-``, ``.``; no
leading ``.`` or ``_``), which keeps a typo or a ``..`` from writing outside the
root and keeps ``_checkpoints`` and ``_catalog`` apart from the layers.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TypeAlias
from urllib.parse import urlparse

from core.storage import Storage, StorageError, probe_folder, storage_for

__all__ = ["CATALOG_DIR", "CHECKPOINTS_DIR", "JOBS_DIR", "LAYERS", "TableName", "Warehouse",
           "WarehouseError", "default_state_dir", "sql_name"]

logger = logging.getLogger(__name__)

LAYERS: tuple[str, ...] = ("bronze", "silver", "gold")
"""The medallion layers of design.md, in data-flow order."""

TableName: TypeAlias = tuple[str, str]
"""A table as ``(layer, name)``; each layer declares its own once, in ``<layer>/schemas.py``."""


def sql_name(table: TableName) -> str:
    """``<layer>.<name>``: what Spark SQL calls the table, and its data-quality suite."""
    return ".".join(table)


CHECKPOINTS_DIR = "_checkpoints"
"""Folder of the state folder that holds one streaming checkpoint per query."""

CATALOG_DIR = "_catalog"
"""Folder of the state folder that Spark's in-memory catalog may use for database folders."""

JOBS_DIR = "_jobs"
"""Folder of the state folder that holds the run records of ``dkg job run``."""

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")


class WarehouseError(StorageError):
    """The warehouse or its state folder cannot be created, reached or written."""


def _check_name(kind: str, name: str) -> str:
    if not _NAME.fullmatch(name) or name in {".", ".."}:
        raise ValueError(
            f"invalid {kind} name {name!r}: use letters, digits, '_', '-' or '.', "
            "not starting with '_' or '.'"
        )
    return name


def _mkdir(path: Path) -> Path:
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise WarehouseError(f"cannot create folder {path}: {exc.strerror or exc}") from exc
    return path


def default_state_dir(storage: Storage) -> Path:
    """Where Spark's state goes for a warehouse on ``storage`` unless ``state_dir`` is set."""
    if storage.local:
        return Path(storage.root)
    parsed = urlparse(storage.root)
    return Path(".dkg", "state", parsed.scheme, parsed.netloc, *filter(None, parsed.path.split("/")))


def _check_state_dir(path: Path) -> None:
    try:
        probe_folder(path)
    except NotADirectoryError as exc:
        raise WarehouseError(f"state folder {path}: {exc.filename} is a file, not a folder") from None
    except OSError as exc:
        raise WarehouseError(f"state folder {path} is not writable: {exc.strerror or exc}") from None


class Warehouse:
    """A warehouse: its storage and its state folder.

    Construction checks that the root and the state folder can be written (a
    probe object each), so a bad ``--warehouse`` fails before any query starts,
    and creates nothing: folders appear with the first table, checkpoint or
    record written, so a command that fails on its other inputs (an
    unreachable Kafka) leaves no empty warehouse behind.

    Args:
        root: a local path or ``s3://bucket/prefix``.
        storage_options: object-store settings (delta-rs names).
        state_dir: where checkpoints, catalog scratch and job records go
            (default: see the module's docstring).

    Raises:
        WarehouseError: the root or state folder cannot be created or written,
            or the location's scheme is not supported.
    """

    def __init__(self, root: str | Path, storage_options: Mapping[str, str] | None = None,
                 state_dir: Path | None = None) -> None:  # fmt: skip
        try:
            self.storage = storage_for(str(root), storage_options or {})
            self.storage.check_writable()
        except StorageError as exc:
            raise WarehouseError(str(exc)) from None
        self.state_dir = Path(state_dir or default_state_dir(self.storage)).absolute()
        if str(self.state_dir) != self.root:
            _check_state_dir(self.state_dir)

    def __repr__(self) -> str:
        """Where the tables are."""
        return f"Warehouse({self.root!r})"

    @property
    def root(self) -> str:
        """The warehouse root: an absolute local path or an object-store URI."""
        return self.storage.root

    def table_uri(self, layer: str, table: str) -> str:
        """Where table ``<layer>.<table>`` lives (created by its first Delta commit)."""
        return self.storage.uri(_check_name("layer", layer), _check_name("table", table))

    def checkpoint(self, query: str) -> str:
        """The checkpoint location of one streaming query (its parent folder created)."""
        return str(_mkdir(self.state_dir / CHECKPOINTS_DIR) / _check_name("query", query))

    def catalog_path(self, layer: str) -> Path:
        """A scratch folder for Spark's database of one layer (created if missing)."""
        return _mkdir(self.state_dir / CATALOG_DIR / f"{_check_name('layer', layer)}.db")

    def job_runs(self, job: str) -> Path:
        """The folder of one job spec's run records and task logs (created if missing)."""
        return _mkdir(self.state_dir / JOBS_DIR / _check_name("job", job))

    def tables(self) -> list[tuple[str, str, str]]:
        """Delta tables that exist now, as ``(layer, table, uri)`` sorted by name.

        A table exists once its ``_delta_log`` folder does; folders starting with
        ``_`` or ``.`` (checkpoints, catalog) are not layers.
        """
        found: list[tuple[str, str, str]] = []
        for layer in filter(_NAME.fullmatch, self.storage.list_dir(self.root)):
            for table in filter(_NAME.fullmatch, self.storage.list_dir(self.storage.uri(layer))):
                if "_delta_log" in self.storage.list_dir(self.storage.uri(layer, table)):
                    found.append((layer, table, self.storage.uri(layer, table)))
        logger.debug("found %d tables under %s", len(found), self.root)
        return found
