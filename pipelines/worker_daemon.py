"""Spark's Python worker daemon, with the pipeline's code loaded before it forks workers.

Spark forks every Python worker from one daemon process. pyspark's own daemon
imports almost nothing, so each new worker pays for pandas, pyarrow, the
Kafka client, the join's parser and the groupings' compiled routing loops on its first task:
seconds per worker, paid again by every stage of a run. Loading them here once
lets every forked worker start warm. Set as ``spark.python.daemon.module``.
"""

from __future__ import annotations

import gc
import sys


def _prefer_compiled_pyspark() -> None:
    # Spark puts pyspark.zip first on the workers' PYTHONPATH; modules in a zip
    # are compiled from source on every import. The installed package next to
    # this interpreter is the same version with its bytecode cached.
    zips = [entry for entry in sys.path if entry.endswith((".zip",)) and "pyspark" in entry]
    sys.path[:] = [entry for entry in sys.path if entry not in zips] + zips


_prefer_compiled_pyspark()

import numpy as np  # noqa: E402 - after the path fix above
from pyspark import daemon  # noqa: E402

import core.kafka.source  # noqa: E402 - loaded here for the forked workers
import core.tables.stream_source  # noqa: E402, F401
import silver.join.operator  # noqa: E402
import silver.join.source  # noqa: E402
import silver.routing  # noqa: E402, F401
from silver.groupings.registry import GROUPING_NAMES, grouping_class  # noqa: E402

__all__ = ["warm_up"]


def warm_up() -> None:
    """Compile (or load from numba's cache) every grouping's routing loop."""
    keys = np.array(["a", "b", "a"], dtype=object)
    times = np.arange(3, dtype=np.int64)
    for name in GROUPING_NAMES:
        cls = grouping_class(name)
        cls.restore(4, cls.params_type(), None).route(keys, times)


if __name__ == "__main__":
    warm_up()
    # Everything loaded so far lives as long as the workers: keep it out of their
    # collections (and their pages shared with the daemon).
    gc.freeze()
    daemon.manager()
