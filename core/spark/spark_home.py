"""A SPARK_HOME for local sessions whose Python processes import compiled pyspark.

Spark starts a fresh Python process (not forked from the worker daemon) for each
planning step of a Python data source: reading its schema, planning a batch's
partitions, running a streaming source's offsets. It puts
``$SPARK_HOME/python/lib/pyspark.zip`` first on their ``PYTHONPATH``, and modules
in a zip are compiled from source on every import: about a CPU-second per
process, paid several times by every streaming query. The installed pyspark next
to the interpreter is the same version with its bytecode cached.

:func:`compiled_spark_home` builds a mirror of pyspark's home, every entry a
symlink except ``python/lib``, so the zips Spark names on that path do not exist
and Python falls through to the installed package.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import tempfile
from pathlib import Path

__all__ = ["compiled_spark_home"]

logger = logging.getLogger(__name__)

_SKIPPED = "python"  # holds lib/pyspark.zip and lib/py4j-*.zip, nothing the JVM reads


def _installed_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).resolve().parent


def _mirror_is_current(mirror: Path, home: Path) -> bool:
    entries = [entry for entry in home.iterdir() if entry.name != _SKIPPED]
    return all((mirror / entry.name).is_symlink() and (mirror / entry.name).resolve() == entry.resolve()
               for entry in entries)  # fmt: skip


def _build_mirror(home: Path, parent: Path) -> Path:
    staging = Path(tempfile.mkdtemp(prefix=".spark-home-", dir=parent))
    for entry in home.iterdir():
        if entry.name != _SKIPPED:
            (staging / entry.name).symlink_to(entry)
    return staging


def compiled_spark_home(parent: Path | None = None) -> Path:
    """Return (creating it once) the mirror of pyspark's home described above.

    Args:
        parent: folder to keep the mirror in; default the system's temp folder.

    Returns:
        The mirror's path, one per pyspark installation, safe to build from
        several processes at once.

    Raises:
        OSError: the mirror cannot be built or repaired (e.g. a read-only folder).
    """
    home = _installed_home()
    parent = parent or Path(tempfile.gettempdir())
    digest = hashlib.sha256(str(home).encode()).hexdigest()[:12]
    mirror = parent / f"dkg-spark-home-{digest}"
    if mirror.is_dir() and _mirror_is_current(mirror, home):
        return mirror
    staging = _build_mirror(home, parent)
    try:
        if mirror.exists():
            shutil.rmtree(mirror)
        os.rename(staging, mirror)
    except OSError:
        # Usually another process put an equivalent mirror in place first.
        shutil.rmtree(staging, ignore_errors=True)
        if not (mirror.is_dir() and _mirror_is_current(mirror, home)):
            raise
    logger.debug("Spark home for local sessions: %s -> %s", mirror, home)
    return mirror
