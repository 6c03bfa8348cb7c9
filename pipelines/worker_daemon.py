"""Spark's Python worker daemon, with the pipeline's code loaded before it forks workers.

Spark forks every Python worker from one daemon process. pyspark's own daemon
imports almost nothing, so each new worker pays for pandas, pyarrow, the
Kafka client and the groupings' compiled routing loops on its first task:
seconds per worker, paid again by every stage of a run. Loading them here once
lets every forked worker start warm. Set as ``spark.python.daemon.module``.
"""

from __future__ import annotations

import numpy as np
from pyspark import daemon

import pipelines.core.kafka_source  # loaded here for the forked workers
import pipelines.core.tables.stream_source  # noqa: F401
import silver.routing  # noqa: F401
from silver.groupings.registry import GROUPING_NAMES, grouping_class

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
    daemon.manager()
