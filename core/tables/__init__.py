"""Delta table I/O: two write backends, an idempotent foreachBatch sink, Spark readers.

- :class:`DeltaRsBackend` (delta-rs, the embedded default) and
  :class:`DeltaSparkBackend` (native ``format("delta")``, only when
  :func:`core.spark.session.delta_spark_available`) implement :class:`TableBackend`.
- :func:`foreach_batch_writer` makes an idempotent ``foreachBatch`` sink.
- :func:`read_delta` / :func:`read_delta_stream` read tables in Spark; without
  Delta jars they use the ``dkg_delta`` Python data source.
- :func:`register_tables` exposes a warehouse to SQL as ``<layer>.<table>``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from core.tables.base import TableBackend, TableData, TableError
    from core.tables.catalog import (
        default_backend,
        read_delta,
        read_delta_stream,
        register_tables,
    )
    from core.tables.delta_log import DeltaLogError
    from core.tables.delta_rs import DeltaRsBackend
    from core.tables.delta_spark import DeltaSparkBackend
    from core.tables.sink import foreach_batch_writer
    from core.tables.stream_source import SOURCE_NAME, DeltaSource, DeltaStreamError

__all__ = [
    "SOURCE_NAME",
    "DeltaLogError",
    "DeltaRsBackend",
    "DeltaSource",
    "DeltaSparkBackend",
    "DeltaStreamError",
    "TableBackend",
    "TableData",
    "TableError",
    "default_backend",
    "foreach_batch_writer",
    "read_delta",
    "read_delta_stream",
    "register_tables",
]

# Each name loads its module when first asked for (PEP 562), not when any module of the
# package is imported: Spark's planner processes import a task-side module such as
# core.tables.base on every query start, and would otherwise load Spark's session
# helpers, the settings and delta-rs with it.
_HOMES = {"TableBackend": "base", "TableData": "base", "TableError": "base",
          "default_backend": "catalog", "read_delta": "catalog", "read_delta_stream": "catalog",
          "register_tables": "catalog", "DeltaLogError": "delta_log", "DeltaRsBackend": "delta_rs",
          "DeltaSparkBackend": "delta_spark", "foreach_batch_writer": "sink",
          "SOURCE_NAME": "stream_source", "DeltaSource": "stream_source",
          "DeltaStreamError": "stream_source"}  # fmt: skip


def __getattr__(name: str) -> Any:
    """The exported ``name``, from the module that defines it."""
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_HOMES[name]}"), name)
