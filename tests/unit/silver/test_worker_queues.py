"""The workers' queues between micro-batches: what a restarted or replayed batch starts from."""

from __future__ import annotations

import pyarrow as pa

from core.tables import DeltaRsBackend
from silver.worker_queues import WORKER_QUEUES_ARROW, WorkerQueues
from silver.workers import QUEUE_ARROW


def _served(*queues: tuple[int, float, float]) -> pa.Table:
    return pa.table({name: [q[i] for q in queues] for i, name in enumerate(QUEUE_ARROW.names)},
                    schema=QUEUE_ARROW)  # fmt: skip


def test_a_restart_reads_each_workers_latest_queue_before_the_batch(tmp_path):
    backend, table = DeltaRsBackend(), tmp_path / "queues"
    backend.create_if_missing(table, WORKER_QUEUES_ARROW)
    first = WorkerQueues(backend, table, "r")
    assert first.before(0) == {}
    first.record(0, _served((0, 10.0, 1.0), (1, 12.0, 2.0)), "r-silver")
    first.record(1, _served((1, 12.0, 5.0)), "r-silver")  # worker 0 got nothing in batch 1
    first.record(2, _served((0, 10.0, 9.0)), "r-silver")
    # Another run's queues in the same table are not this run's.
    WorkerQueues(backend, table, "other").record(0, _served((0, 99.0, 99.0)), "other-silver")
    assert first.before(3) == {0: (10.0, 9.0), 1: (12.0, 5.0)}  # as it remembers them

    restarted = WorkerQueues(backend, table, "r")
    assert restarted.before(3) == {0: (10.0, 9.0), 1: (12.0, 5.0)}
    # A replay of batch 2 (committed already) starts from the queues after batch 1.
    assert WorkerQueues(backend, table, "r").before(2) == {0: (10.0, 1.0), 1: (12.0, 5.0)}


def test_a_replayed_batch_is_recorded_once(tmp_path):
    backend, table = DeltaRsBackend(), tmp_path / "queues"
    backend.create_if_missing(table, WORKER_QUEUES_ARROW)
    queues = WorkerQueues(backend, table, "r")
    queues.record(0, _served((0, 10.0, 1.0)), "r-silver")
    WorkerQueues(backend, table, "r").record(0, _served((0, 10.0, 1.0)), "r-silver")
    assert backend.read(table).num_rows == 1
