"""The workers' queues between micro-batches: what a restarted or replayed batch starts from."""

from __future__ import annotations

import pyarrow as pa

from core.storage import LOCAL_FILES
from core.tables import DeltaRsBackend
from silver.worker_queues import WorkerQueues, queues_metadata
from silver.workers import QUEUE_ARROW, WORKER_WINDOWS_ARROW


def _served(*queues: tuple[int, float, float]) -> pa.Table:
    return pa.table({name: [q[i] for q in queues] for i, name in enumerate(QUEUE_ARROW.names)},
                    schema=QUEUE_ARROW)  # fmt: skip


def _commit(backend: DeltaRsBackend, windows: str, queues: WorkerQueues, app_id: str,
            batch_id: int, served: pa.Table) -> None:  # fmt: skip
    """What the silver writer does: the batch's worker windows, with the queues after it."""
    after = queues.after(batch_id, served)
    row = pa.Table.from_pylist([{"run_id": app_id, "batch_id": batch_id, "window_start_ms": 0,
                                 "worker": 0, "key": "k", "count": 1, "tuples": 1,
                                 "window_end_ms": 1}], WORKER_WINDOWS_ARROW)  # fmt: skip
    backend.append(windows, row, app_id, batch_id, user_metadata=queues_metadata(after))
    queues.remember(batch_id, after)


def test_a_restart_reads_each_workers_latest_queue_before_the_batch(tmp_path):
    backend, windows = DeltaRsBackend(), str(tmp_path / "windows")
    backend.create_if_missing(windows, WORKER_WINDOWS_ARROW)
    first = WorkerQueues(backend, LOCAL_FILES, windows, "r-silver")
    assert first.before(0) == {}
    _commit(backend, windows, first, "r-silver", 0, _served((0, 10.0, 1.0), (1, 12.0, 2.0)))
    _commit(backend, windows, first, "r-silver", 1, _served((1, 12.0, 5.0)))  # worker 0 idle
    # Another query's commits in the same table are not this query's.
    other = WorkerQueues(backend, LOCAL_FILES, windows, "other-silver")
    _commit(backend, windows, other, "other-silver", 0, _served((0, 99.0, 99.0)))
    _commit(backend, windows, first, "r-silver", 2, _served((0, 10.0, 9.0)))
    _commit(backend, windows, other, "other-silver", 1, _served((3, 98.0, 98.0)))
    assert first.before(3) == {0: (10.0, 9.0), 1: (12.0, 5.0)}  # as it remembers them
    # Restarted at batch 4: batch 3 served no tuple, so it made no commit.
    assert WorkerQueues(backend, LOCAL_FILES, windows, "r-silver").before(4) == {
        0: (10.0, 9.0), 1: (12.0, 5.0)}  # fmt: skip
    # A replay of batch 2 (committed already) starts from the queues after batch 1.
    assert WorkerQueues(backend, LOCAL_FILES, windows, "r-silver").before(2) == {
        0: (10.0, 1.0), 1: (12.0, 5.0)}  # fmt: skip
    assert WorkerQueues(backend, LOCAL_FILES, windows, "r-silver").before(0) == {}
    assert WorkerQueues(backend, LOCAL_FILES, windows, "new-silver").before(7) == {}


def test_queues_round_trip_exactly(tmp_path):
    # Latencies follow from the queues: a replay must start from the very same floats.
    backend, windows = DeltaRsBackend(), str(tmp_path / "windows")
    backend.create_if_missing(windows, WORKER_WINDOWS_ARROW)
    queues = WorkerQueues(backend, LOCAL_FILES, windows, "r-silver")
    odd = (0.1 + 0.2, 1e300 / 3, 5e-324)
    _commit(backend, windows, queues, "r-silver", 0, _served((0, odd[0], odd[1]), (7, odd[2], 0.0)))
    restored = WorkerQueues(backend, LOCAL_FILES, windows, "r-silver").before(1)
    assert restored == {0: (odd[0], odd[1]), 7: (odd[2], 0.0)}
