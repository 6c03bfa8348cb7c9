"""An idempotent ``foreachBatch`` sink over any :class:`TableBackend`.

Spark re-runs the last micro-batch after a crash with the same batch id; the
backend's application transaction turns that replay into a no-op.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

from core.spark.foreach_batch import BatchWriter
from core.tables.base import TableBackend, TablePath

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = ["foreach_batch_writer", "recorded_anywhere", "written_everywhere"]

logger = logging.getLogger(__name__)

def foreach_batch_writer(
    backend: TableBackend,
    path: TablePath,
    app_id: str,
    mode: Literal["append", "merge"] = "append",
    keys: Sequence[str] | None = None,
    partition_by: Sequence[str] | None = None,
) -> BatchWriter:
    """Build the function to pass to ``writeStream.foreachBatch``.

    Args:
        backend: Where to write (delta-rs converts the batch with ``df.toArrow()``
            on the driver; delta-spark writes it natively).
        path: Target table folder.
        app_id: Application id recorded with each batch; one per query and table.
            Keep it stable across restarts, or replays are no longer detected.
        mode: ``append`` or ``merge`` (upsert by ``keys``).
        keys: Key columns for ``merge``.
        partition_by: Partition columns if the table has to be created.

    Returns:
        A callable run on the driver for each micro-batch.

    Raises:
        ValueError: ``merge`` without keys, or an unknown mode.
    """
    if mode not in ("append", "merge"):
        raise ValueError(f"unknown mode {mode!r}: use 'append' or 'merge'")
    if mode == "merge" and not keys:
        raise ValueError("mode='merge' needs key columns")

    def write_batch(df: DataFrame, batch_id: int) -> None:
        started = time.monotonic()
        if mode == "merge":
            written = backend.merge(path, df, list(keys or ()), app_id, batch_id, partition_by)
        else:
            written = backend.append(path, df, app_id, batch_id, partition_by)
        logger.debug(
            "%s batch %d to %s: %s in %.2f s",
            app_id,
            batch_id,
            path,
            "written" if written else "skipped",
            time.monotonic() - started,
        )

    return write_batch


def written_everywhere(backend: TableBackend, paths: Sequence[TablePath], app_id: str,
                       batch_id: int) -> bool:  # fmt: skip
    """Whether every table already holds ``batch_id`` of ``app_id``.

    A writer that splits one micro-batch over several tables checks this before
    computing the batch: a replay after a crash between its writes recomputes it
    (deterministically) and each table's own check then skips what it has.
    """
    for path in paths:
        last = backend.transaction_version(path, app_id)
        if last is None or last < batch_id:
            return False
    return True


def recorded_anywhere(backend: TableBackend, paths: Sequence[TablePath], app_id: str) -> bool:
    """Whether any of the tables records a micro-batch of ``app_id`` (a missing table records none).

    A streaming query whose checkpoint has committed batches that none of its tables
    records has lost its tables (see :func:`core.stages.start_query`).
    """
    return any(backend.transaction_version(path, app_id) is not None for path in paths)
