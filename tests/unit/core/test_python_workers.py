"""Python workers started ahead of a query: a failure to start them is a warning, never an error."""

from __future__ import annotations

import logging
import threading

import pytest

from core.spark.python_workers import python_workers_starting


class _StoppedSession:
    """A session whose context is gone, as after ``stop()``; the error carries no message."""

    @property
    def sparkContext(self) -> object:  # SparkSession's name
        raise RuntimeError()


def test_a_failed_start_is_one_warning_and_the_block_runs(caplog: pytest.LogCaptureFixture,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    crashes: list[BaseException] = []
    monkeypatch.setattr(threading, "excepthook", lambda args: crashes.append(args.exc_value))
    ran = []
    with caplog.at_level(logging.WARNING, "core.spark.python_workers"):
        with python_workers_starting(_StoppedSession()):  # type: ignore[arg-type]
            ran.append(True)
    assert ran == [True]
    assert not crashes
    assert [r.getMessage() for r in caplog.records] == [
        "Python workers not started ahead of the query: RuntimeError"]
