"""The gold loop's wait for silver: woken by the silver writer's signal, answered by the log."""

from __future__ import annotations

import threading
import time

import pyarrow as pa
import pytest

from core.storage import LOCAL_FILES
from core.tables import DeltaRsBackend
from pipelines.continuous import _await_silver, _signalling

TIMEOUT_S = 30.0
"""Long next to a commit: an await that ignored the signal would last all of it."""


def _append(backend: DeltaRsBackend, path: str, batch_id: int) -> None:
    backend.append(path, pa.table({"n": [batch_id]}), "silver", batch_id)


def test_the_wait_ends_at_the_signalled_commit_not_at_the_timeout(tmp_path):
    path, backend = str(tmp_path / "worker_windows"), DeltaRsBackend()
    _append(backend, path, 0)
    committed = threading.Event()
    writer = _signalling(lambda df, batch_id: _append(backend, path, batch_id), committed)
    later = threading.Timer(0.5, writer, args=(None, 1))
    started = time.monotonic()
    later.start()
    try:
        version = _await_silver(LOCAL_FILES, path, 0, committed, TIMEOUT_S)
    finally:
        later.join()
    assert version == 1  # the log's version, read after the signal
    assert time.monotonic() - started < TIMEOUT_S / 2


def test_without_a_commit_the_wait_ends_at_the_timeout(tmp_path):
    path, backend = str(tmp_path / "worker_windows"), DeltaRsBackend()
    _append(backend, path, 0)
    committed = threading.Event()
    committed.set()  # a signal with nothing new in the log (a replayed batch) is no answer
    started = time.monotonic()
    assert _await_silver(LOCAL_FILES, path, 0, committed, 0.3) == 0
    assert time.monotonic() - started >= 0.3


def test_a_failed_batch_signals_nothing():
    committed = threading.Event()

    def failing(df: object, batch_id: int) -> None:
        raise RuntimeError("commit failed")

    with pytest.raises(RuntimeError, match="commit failed"):
        _signalling(failing, committed)(None, 0)
    assert not committed.is_set()
