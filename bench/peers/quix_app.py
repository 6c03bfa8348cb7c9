"""The quix-streams peer: count messages per key per 60 s tumbling window of event time.

What a Python user would write instead of the lakehouse: one quix-streams
application, default settings (at-least-once, RocksDB state with its changelog
topic on the broker), reading the topic from the start. Messages are keyed JSON
(``{"key": ..., "count": 1, "timestamp": <epoch ms>}``, keyed by ``key``): quix
keeps state per message key, and the window's event time comes from the parsed
``timestamp``.

It runs in a virtualenv of its own (``scripts/setup-peers.sh``): quixstreams
3.28.1 needs ``confluent-kafka<2.13`` and the project pins 2.16.1. So it imports
nothing from the project; the benchmark hands it a settings file and reads back
a JSON file::

    python bench/peers/quix_app.py SETTINGS.json RESULT.json

Settings: ``bootstrap``, ``topic``, ``messages`` (stop after that many),
``consumer`` (librdkafka settings of the broker's profile),
``state_dir``, ``group``, ``idle_timeout_s``. Result: ``seconds`` and ``cpu_s``
from building the application to the last message (imports left out, as the
pipeline's figure leaves out starting Spark), and ``counts``
(``[window_start_ms, key, count]`` rows).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

from quixstreams import Application

__all__ = ["count_windows"]


def count_windows(settings: dict[str, Any]) -> dict[str, Any]:
    """Run the application until ``messages`` messages went through; the counts and timings."""
    started, cpu_started = time.monotonic(), time.process_time()
    app = Application(broker_address=settings["bootstrap"], consumer_group=settings["group"],
                      auto_offset_reset="earliest", state_dir=settings["state_dir"],
                      consumer_extra_config=settings["consumer"], loglevel="WARNING")  # fmt: skip
    topic = app.topic(settings["topic"], key_deserializer="str", value_deserializer="json",
                      timestamp_extractor=lambda value, headers, ts, kind: value["timestamp"])  # fmt: skip
    latest: dict[tuple[int, str], int] = {}

    def keep(window: dict[str, Any], key: str, timestamp: int, headers: Any) -> None:
        latest[(window["start"], key)] = window["value"]

    # current(): one output per message, the window's running count. final() would
    # hold back each key's last window until a later message closes it, which never
    # comes at the end of a finite topic.
    app.dataframe(topic).tumbling_window(60_000).count().current().update(keep, metadata=True)
    # Stops after `messages` outputs, or once no message came for idle_timeout_s.
    app.run(count=settings["messages"], timeout=settings["idle_timeout_s"], collect=False)
    return {"seconds": time.monotonic() - started, "cpu_s": time.process_time() - cpu_started,
            "counts": [[start, key, count] for (start, key), count in latest.items()]}  # fmt: skip


if __name__ == "__main__":
    result = count_windows(json.loads(Path(sys.argv[1]).read_text()))
    Path(sys.argv[2]).write_text(json.dumps(result))
