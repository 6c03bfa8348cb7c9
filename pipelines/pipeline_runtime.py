"""The runtime the pipeline's commands open: core's, with Spark's Python workers
forking from :mod:`pipelines.worker_daemon`, which has the pipeline's code loaded."""

from __future__ import annotations

from core.config import LoadedSettings
from core.runtime import Runtime

__all__ = ["WORKER_DAEMON", "open_runtime"]

WORKER_DAEMON = "pipelines.worker_daemon"
"""Named, not imported: importing it rearranges ``sys.path`` as only a worker should."""


def open_runtime(loaded: LoadedSettings, app_name: str = "dkg") -> Runtime:
    """A :class:`Runtime` whose Spark session forks Python workers from :data:`WORKER_DAEMON`."""
    return Runtime(loaded, app_name, python_daemon=WORKER_DAEMON)
