"""Warehouse layout: ``<root>/<layer>/<table>`` and ``<root>/_checkpoints/<query>``.

Every table path and checkpoint location comes from one :class:`Warehouse`, so no
module spells a path literal. Names are single path segments (letters, digits,
``_``, ``-``, ``.``; no leading ``.`` or ``_``), which keeps a typo or a ``..``
from writing outside the root and keeps ``_checkpoints`` and ``_catalog`` apart
from the layers.
"""

from __future__ import annotations

import logging
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

__all__ = ["CATALOG_DIR", "CHECKPOINTS_DIR", "JOBS_DIR", "LAYERS", "Warehouse", "WarehouseError"]

logger = logging.getLogger(__name__)

LAYERS: tuple[str, ...] = ("bronze", "silver", "gold")
"""The medallion layers of design.md, in data-flow order."""

CHECKPOINTS_DIR = "_checkpoints"
"""Folder under the root that holds one streaming checkpoint per query."""

CATALOG_DIR = "_catalog"
"""Folder under the root that Spark's in-memory catalog may use for database folders."""

JOBS_DIR = "_jobs"
"""Folder under the root that holds the run records of ``dkg job run``."""

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")


class WarehouseError(OSError):
    """The warehouse root or one of its folders cannot be created or written."""


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
        raise WarehouseError(
            f"cannot create warehouse folder {path}: {exc.strerror or exc}"
        ) from exc
    return path


def _check_writable(root: Path) -> None:
    # A real probe file rather than os.access: root ignores permission bits, and
    # read-only mounts only show up on an actual write.
    try:
        with tempfile.NamedTemporaryFile(dir=root, prefix=".write-probe-"):
            pass
    except OSError as exc:
        raise WarehouseError(
            f"warehouse root {root} is not writable: {exc.strerror or exc}"
        ) from exc


@dataclass(frozen=True)
class Warehouse:
    """A warehouse root; creates its folders on demand.

    Construction creates the root if needed and checks that it is writable, so a
    bad ``--warehouse`` fails before any query starts.

    Attributes:
        root: The warehouse root; stored as an absolute path.

    Raises:
        WarehouseError: The root cannot be created or is not writable.
    """

    root: Path

    def __post_init__(self) -> None:
        # Absolute, so Spark executors and delta-rs agree on the location
        # whatever their working directory is.
        object.__setattr__(self, "root", Path(self.root).expanduser().absolute())
        _mkdir(self.root)
        _check_writable(self.root)

    def layer_path(self, layer: str) -> Path:
        """The folder of one layer (created if missing)."""
        return _mkdir(self.root / _check_name("layer", layer))

    def table_path(self, layer: str, table: str) -> Path:
        """Where table ``<layer>.<table>`` lives; its layer folder is created if missing.

        The table folder itself is left to the Delta writer, which creates it
        with the first commit.
        """
        return self.layer_path(layer) / _check_name("table", table)

    def checkpoint(self, query: str) -> Path:
        """The checkpoint location of one streaming query (parent folder created)."""
        return _mkdir(self.root / CHECKPOINTS_DIR) / _check_name("query", query)

    def catalog_path(self, layer: str) -> Path:
        """A scratch folder for Spark's database of one layer (created if missing)."""
        return _mkdir(self.root / CATALOG_DIR / f"{_check_name('layer', layer)}.db")

    def job_runs(self, job: str) -> Path:
        """The folder of one job spec's run records and task logs (created if missing)."""
        return _mkdir(self.root / JOBS_DIR / _check_name("job", job))

    def tables(self) -> list[tuple[str, str, Path]]:
        """Delta tables that exist now, as ``(layer, table, path)`` sorted by name.

        A table exists once its ``_delta_log`` folder does; folders starting with
        ``_`` or ``.`` (checkpoints, catalog) are not layers.
        """
        found: list[tuple[str, str, Path]] = []
        for layer_dir in sorted(p for p in self.root.iterdir() if p.is_dir()):
            if not _NAME.fullmatch(layer_dir.name):
                continue
            for table_dir in sorted(p for p in layer_dir.iterdir() if p.is_dir()):
                if _NAME.fullmatch(table_dir.name) and (table_dir / "_delta_log").is_dir():
                    found.append((layer_dir.name, table_dir.name, table_dir))
        logger.debug("found %d tables under %s", len(found), self.root)
        return found
