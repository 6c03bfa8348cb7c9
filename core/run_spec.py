"""One run of the pipeline: a source type through one grouping, and the settings its stages share."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["RunSpec"]


@dataclass(frozen=True)
class RunSpec:
    """One run: a source type through one grouping (names as in the seed).

    The windows, queue model and batch sizes are ``run.*`` settings (:class:`core.config.RunConfig`).
    """

    run_id: str
    source_type: str
    grouping: str
    workers: int
    splitters: int
    params: dict[str, Any] = field(default_factory=dict)
    worker_window_ms: int = 15_000
    aggregation_window_ms: int = 60_000
    process_ms: float = 1.0
    speed: float = 1.0
    silver_max_bytes_per_trigger: int = 48 << 20
