"""The workers' queues between micro-batches, kept in ``silver.worker_queues``.

The routing's state lives in Spark's state store, but a query may hold only one
``applyInPandasWithState``, so the workers, which run in the same micro-batch,
keep theirs in a table: each micro-batch appends every served worker's queue
(time origin and last completion) under the query's application transaction,
like the other silver tables. The driver remembers the last batch's queues and
reads the table only when it did not see the batch before (a start, a replay):
the queues before batch ``n`` are each worker's latest row of a batch before
``n``, so a batch replayed after a crash is served from the same queues.
"""

from __future__ import annotations

import logging

import pyarrow as pa
import pyarrow.compute as pc

from core.tables.base import TableBackend, TablePath
from silver.workers import QUEUE_ARROW, QueueState

__all__ = ["WORKER_QUEUES_ARROW", "WorkerQueues"]

logger = logging.getLogger(__name__)

WORKER_QUEUES_ARROW = pa.schema([pa.field("run_id", pa.string()), pa.field("batch_id", pa.int64()),
                                 *QUEUE_ARROW])  # fmt: skip


class WorkerQueues:
    """One run's worker queues, batch by batch (used on the driver)."""

    def __init__(self, backend: TableBackend, table: TablePath, run_id: str) -> None:
        self._backend, self._table, self._run_id = backend, table, run_id
        self._queues: dict[int, QueueState] = {}
        self._after: int | None = None  # the batch ``_queues`` follow

    def before(self, batch_id: int) -> dict[int, QueueState]:
        """Each worker's queue before ``batch_id`` (workers with none yet are absent)."""
        if self._after != batch_id - 1:
            self._queues, self._after = self._read(batch_id), batch_id - 1
        return dict(self._queues)

    def record(self, batch_id: int, served: pa.Table, app_id: str) -> None:
        """Append the queues of the workers ``batch_id`` served (``QUEUE_ARROW`` rows)."""
        before = self.before(batch_id)
        rows = served.cast(QUEUE_ARROW)
        tags = [pa.repeat(pa.scalar(self._run_id, pa.string()), rows.num_rows),
                pa.repeat(pa.scalar(batch_id, pa.int64()), rows.num_rows)]  # fmt: skip
        tagged = pa.Table.from_arrays([*tags, *rows.columns], schema=WORKER_QUEUES_ARROW)
        self._backend.append(self._table, tagged, app_id, batch_id)
        for worker, origin, last in zip(*(rows[c].to_pylist() for c in QUEUE_ARROW.names),
                                        strict=True):  # fmt: skip
            before[worker] = (origin, last)
        self._queues, self._after = before, batch_id

    def _read(self, batch_id: int) -> dict[int, QueueState]:
        if self._backend.version(self._table) is None:
            return {}
        rows = self._backend.read(self._table)
        rows = rows.filter(pc.and_(pc.equal(rows["run_id"], self._run_id),
                                   pc.less(rows["batch_id"], batch_id)))  # fmt: skip
        latest = rows.sort_by("batch_id").to_pylist()  # later batches overwrite earlier ones
        queues = {row["worker"]: (row["origin_ms"], row["last_completion_ms"]) for row in latest}
        logger.debug("run %s: %d worker queues before batch %d", self._run_id, len(queues), batch_id)
        return queues
