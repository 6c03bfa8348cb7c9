"""The workers' queues between micro-batches, kept in ``silver.worker_windows``' commits.

The routing's state lives in Spark's state store, but a query may hold only one
``applyInPandasWithState``, so the workers, which run in the same micro-batch,
keep theirs in the Delta log: the commit of a micro-batch's worker windows
carries every worker's queue after the batch (time origin and last completion)
as its ``userMetadata``, a commit a table of their own would otherwise cost each
batch. The driver remembers the last batch's queues and reads the log only when
it did not see the batch before (a start, a replay): the queues before batch
``n`` are those of the query's newest commit of a batch before ``n``, so a batch
replayed after a crash is served from the same queues. A batch without worker
windows served no tuple and left the queues as they were. Log cleanup removes
commits older than the log retention (30 days by default): a query resumed after
that starts its workers' queues afresh.
"""

from __future__ import annotations

import json
import logging

import pyarrow as pa

from core.storage import Storage
from core.tables.base import TableBackend
from core.tables.delta_log import DeltaLogError, latest_version, read_commit
from silver.workers import QUEUE_ARROW, QueueState

__all__ = ["WorkerQueues", "queues_metadata"]

logger = logging.getLogger(__name__)

_KEY = "worker_queues"  # in the userMetadata JSON: worker -> [origin_ms, last_completion_ms]


def queues_metadata(queues: dict[int, QueueState]) -> str:
    """``queues`` as the ``userMetadata`` of the worker windows' commit."""
    return json.dumps({_KEY: {str(worker): list(queue) for worker, queue in sorted(queues.items())}})


class WorkerQueues:
    """One silver query's worker queues, batch by batch (used on the driver).

    Args:
        backend: the Delta backend.
        storage: where the tables are.
        windows: the ``silver.worker_windows`` table.
        app_id: the query's application id.
    """

    def __init__(self, backend: TableBackend, storage: Storage, windows: str, app_id: str) -> None:
        self._backend, self._storage, self._windows, self._app_id = backend, storage, windows, app_id
        self._queues: dict[int, QueueState] = {}
        self._after: int | None = None  # the batch ``_queues`` follow

    def before(self, batch_id: int) -> dict[int, QueueState]:
        """Each worker's queue before ``batch_id`` (workers with none yet are absent)."""
        if self._after != batch_id - 1:
            self._queues, self._after = self._read(batch_id), batch_id - 1
        return dict(self._queues)

    def after(self, batch_id: int, served: pa.Table) -> dict[int, QueueState]:
        """Each worker's queue after ``batch_id``, given the queues of the workers it served
        (``QUEUE_ARROW`` rows); record them with the batch's worker windows, then :meth:`remember`."""
        queues = self.before(batch_id)
        rows = served.cast(QUEUE_ARROW)
        for worker, origin, last in zip(*(rows[c].to_pylist() for c in QUEUE_ARROW.names),
                                        strict=True):  # fmt: skip
            queues[worker] = (origin, last)
        return queues

    def remember(self, batch_id: int, queues: dict[int, QueueState]) -> None:
        """The queues after ``batch_id`` (:meth:`after`), now committed."""
        self._queues, self._after = dict(queues), batch_id

    def _read(self, batch_id: int) -> dict[int, QueueState]:
        last = self._backend.transaction_version(self._windows, self._app_id)
        if last is None:  # the query never committed worker windows
            return {}
        version = latest_version(self._storage, self._windows)
        while version >= 0:  # newest first: the query's latest commits are near the top
            try:
                commit = read_commit(self._storage, self._windows, version, {})
            except DeltaLogError as why:
                logger.warning("%s: workers' queues start afresh: %s", self._app_id, why)
                return {}
            batch = commit.transactions.get(self._app_id)
            if batch is not None and batch < batch_id and commit.user_metadata is not None:
                queues = json.loads(commit.user_metadata)[_KEY]
                logger.debug("%s: %d worker queues before batch %d", self._app_id, len(queues),
                             batch_id)  # fmt: skip
                return {int(worker): (origin, last) for worker, (origin, last) in queues.items()}
            version -= 1
        return {}
