"""Run the quix-streams peer (:mod:`bench.peers.quix_app`) in its own virtualenv and read its counts."""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from core.kafka.client import KafkaClient

__all__ = ["PEERS_PYTHON", "QuixRun", "count_windows", "peers_python"]

_ROOT = Path(__file__).resolve().parents[2]
PEERS_PYTHON = _ROOT / ".venv-peers" / "bin" / "python"
"""The interpreter of the quix-streams virtualenv that ``scripts/setup-peers.sh`` makes."""


def peers_python() -> str:
    """:data:`PEERS_PYTHON`, after installing it if needed."""
    setup = str(_ROOT / "scripts" / "setup-peers.sh")
    subprocess.run([setup], check=True)  # noqa: S603 - the project's own script
    return str(PEERS_PYTHON)


@dataclass(frozen=True)
class QuixRun:
    """What the application counted, and its wall and CPU seconds (imports left out)."""

    counts: pd.DataFrame
    seconds: float
    cpu_s: float


def count_windows(python: str, kafka: KafkaClient, topic: str, messages: int, folder: Path,
                  timeout_s: float) -> QuixRun:  # fmt: skip
    """Count the first ``messages`` messages of ``topic`` per key and 60 s window.

    Args:
        python: the interpreter of :func:`peers_python`.
        kafka: the broker's clients.
        topic: read from its start, as consumer group ``bench-quix``.
        messages: the application stops once it has processed this many.
        folder: for its settings, state and result (a new one per run).
        timeout_s: the process is killed after this long.
    """
    folder.mkdir(parents=True, exist_ok=True)
    # The local profile's consumer settings let librdkafka read the embedded broker;
    # quix's producer keeps its own (idempotent, so acks=all, not the profile's acks=1).
    consumer = {k: v for k, v in kafka.consumer_settings().items() if k != "bootstrap.servers"}
    settings = {"bootstrap": kafka.bootstrap, "topic": topic, "messages": messages,
                "consumer": consumer, "state_dir": str(folder / "state"), "group": "bench-quix",
                "idle_timeout_s": 60}  # fmt: skip
    (folder / "settings.json").write_text(json.dumps(settings))
    subprocess.run([python, str(Path(__file__).with_name("quix_app.py")),  # noqa: S603
                    str(folder / "settings.json"), str(folder / "result.json")],
                   check=True, timeout=timeout_s)  # fmt: skip
    result = json.loads((folder / "result.json").read_text())
    counts = pd.DataFrame(result["counts"], columns=["window_start_ms", "key", "count"])
    return QuixRun(counts, result["seconds"], result["cpu_s"])
