"""Job specs and SQL files that come with the project, found by name from any folder.

``conf/jobs/*.yml`` and ``conf/sql/*.sql`` live in the project's ``conf/``
folder (:func:`core.config.default_conf_dir`, the one ``conf/base.yaml`` is read
from). A command given ``compare_groupings``, or the documented path
``conf/jobs/compare_groupings.yml`` while no such file exists in the current
folder, reads the project's file; a file that exists is always read as it is.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from core.config import default_conf_dir

__all__ = ["JOB_SUFFIXES", "SQL_SUFFIXES", "bundled_names", "find_conf_file", "require_conf_file"]

JOB_SUFFIXES = (".yml", ".yaml")
SQL_SUFFIXES = (".sql",)


def _folder(kind: str) -> Path:
    return default_conf_dir() / kind


def bundled_names(kind: str, suffixes: tuple[str, ...]) -> list[str]:
    """Names of the project's files in ``conf/<kind>`` (``jobs``, ``sql``), sorted."""
    folder = _folder(kind)
    if not folder.is_dir():
        return []
    return sorted(p.stem for p in folder.iterdir() if p.suffix in suffixes and p.is_file())


def _bundled(given: Path, kind: str, suffixes: tuple[str, ...]) -> Path | None:
    parts = given.parts
    if len(parts) > 2 and parts[:2] == ("conf", kind):
        relative = Path(*parts[2:])  # the documented path, written from the project's folder
    elif len(parts) == 1:
        relative = given  # a bare name, with or without its suffix
    else:
        return None
    names = (
        [relative]
        if relative.suffix in suffixes
        else [relative.with_name(relative.name + suffix) for suffix in suffixes]
    )
    return next((_folder(kind) / n for n in names if (_folder(kind) / n).is_file()), None)


def find_conf_file(given: str | Path, kind: str, suffixes: tuple[str, ...]) -> Path | None:
    """The file ``given`` names: itself if it exists, else the project's file of that name.

    Args:
        given: A path (``conf/jobs/lakehouse.yml``, ``~/my.yml``) or a bare name
            (``lakehouse``).
        kind: The folder of ``conf/``: ``jobs`` or ``sql``.
        suffixes: The file suffixes a bare name may omit.

    Returns:
        ``given`` when it is a file (or an absolute path), else the project's file,
        else None. A folder of that name does not count: ``dkg job run lakehouse``
        is run where an earlier run left its ``lakehouse`` warehouse.
    """
    path = Path(given).expanduser()
    if path.is_file() or path.is_absolute():
        return path
    return _bundled(path, kind, suffixes)


def require_conf_file(given: str, kind: str, suffixes: tuple[str, ...], what: str, listed: str,
                      error: Callable[[str], Exception]) -> Path:  # fmt: skip
    """:func:`find_conf_file`, or ``error`` naming ``given`` and the project's files of that kind.

    ``what`` prefixes the name in the message (``"job spec "``); ``listed`` names the
    project's files (``"specs"``, ``"SQL files"``).
    """
    found = find_conf_file(given, kind, suffixes)
    if found is None:
        names = ", ".join(bundled_names(kind, suffixes)) or "none"
        raise error(f"cannot read {what}{given}: no such file here, nor among the project's "
                    f"{listed} ({names})")  # fmt: skip
    return found
