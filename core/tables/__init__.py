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
