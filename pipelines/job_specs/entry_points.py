"""Console-script entry points by name, as a ``python_wheel_task`` names them.

A Databricks wheel task calls ``entry_point`` of the installed wheel
``package_name``. Locally the same names are looked up in the ``[project.scripts]``
of the checkout whose code is running (so a fresh checkout works without a
reinstall), and otherwise in the installed distribution's metadata.
"""

from __future__ import annotations

import logging
import re
import tomllib
from functools import cache
from importlib import metadata
from pathlib import Path

__all__ = ["ENTRY_POINT_PATTERN", "checkout_root", "normalize_package", "resolve_entry_point"]

logger = logging.getLogger(__name__)

ENTRY_POINT_PATTERN = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")
"""``module.path:function``, the only form a task may call."""


def normalize_package(name: str) -> str:
    """PEP 503 normalization, so ``dkg_lakehouse`` and ``dkg-lakehouse`` are one package."""
    return re.sub(r"[-_.]+", "-", name).lower()


def checkout_root() -> Path:
    """The folder that holds the running ``pipelines`` package (and its pyproject.toml)."""
    return Path(__file__).resolve().parents[2]


@cache
def _checkout_scripts(pyproject: Path) -> tuple[str, dict[str, str]] | None:
    try:
        data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError):
        logger.debug("no readable pyproject at %s", pyproject, exc_info=True)
        return None
    project = data.get("project", {})
    return str(project.get("name", "")), dict(project.get("scripts", {}))


def _installed_scripts(package: str) -> dict[str, str]:
    try:
        entry_points = metadata.distribution(package).entry_points
    except metadata.PackageNotFoundError:
        return {}
    return {ep.name: ep.value for ep in entry_points if ep.group == "console_scripts"}


def resolve_entry_point(package_name: str, entry_point: str) -> str | None:
    """``module:function`` of console script ``entry_point`` of ``package_name``, or None.

    The checkout's ``pyproject.toml`` wins over installed metadata, because an
    editable install's metadata is only as new as its last ``pip install``.
    """
    wanted = normalize_package(package_name)
    checkout = _checkout_scripts(checkout_root() / "pyproject.toml")
    if checkout is not None and normalize_package(checkout[0]) == wanted:
        target = checkout[1].get(entry_point)
        if target is not None:
            return target
    return _installed_scripts(package_name).get(entry_point)
