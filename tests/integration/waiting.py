"""Waiting for a Delta table to reach a version (kill tests time their SIGKILL by it)."""

from __future__ import annotations

import time
from pathlib import Path

from core.tables import DeltaRsBackend

__all__ = ["wait_for_version"]


def wait_for_version(path: str | Path, version: int, timeout_s: float = 120) -> None:
    """Return once the table at ``path`` has ``version``; fail after ``timeout_s``."""
    backend = DeltaRsBackend()
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        current = backend.version(path) if (Path(path) / "_delta_log").exists() else None
        if current is not None and current >= version:
            return
        time.sleep(0.05)
    raise AssertionError(f"{path} never reached version {version}")
