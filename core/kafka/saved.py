"""What the embedded broker has saved to disk: the end offsets in its snapshot file.

noida-db keeps every message in memory and rewrites one JSON snapshot of
everything (``<data dir>/kafka.json``, replaced by an atomic rename) about once
a second while something changed, and on SIGINT/SIGTERM. It does not sync
writes to disk as it acknowledges them: a broker killed with SIGKILL comes back
with the last snapshot only. Measured with noida-db 0.2.3: all of 200,000
acknowledged messages lost when killed within 3 s of the producer's flush.

So a writer to the embedded broker is done when the snapshot holds its
messages, not when the broker acknowledged them. The snapshot of a million
messages is some 200 MB; parsing it as JSON would take seconds and gigabytes,
so :func:`saved_end_offsets` scans it in place instead: message bytes are
stored as JSON arrays of numbers, so the field names it looks for cannot occur
inside them.
"""

from __future__ import annotations

import mmap
import re
from pathlib import Path

from core.errors import DkgError

__all__ = ["SNAPSHOT_FILE", "SnapshotFormatError", "saved_end_offsets"]

SNAPSHOT_FILE = "kafka.json"

_DIGITS = re.compile(rb"\d+")
_PARTITION = b'{"id":'
_END = b'"high_watermark":'


class SnapshotFormatError(DkgError, ValueError):
    """The snapshot file is not laid out as this module expects (another noida-db version)."""


def _number(data: mmap.mmap, at: int) -> int:
    found = _DIGITS.match(data, at)
    if found is None:
        raise SnapshotFormatError(f"expected a number at byte {at}")
    return int(found.group())


def _scan(data: mmap.mmap, topic: str) -> dict[int, int] | None:
    # A topic is saved as {"name":T,"is_internal":..,"partitions":[[id,{"id":id,..,
    # "record_batches":[..],"high_watermark":N,..}],..],"configs":{..}}.
    start = data.find(b'{"name":"%s","is_internal":' % topic.encode())
    if start < 0:
        return None
    stop = data.find(b',"configs":', start)
    if stop < 0:
        raise SnapshotFormatError(f"topic {topic} has no end")
    ends: dict[int, int] = {}
    at = data.find(_END, start, stop)
    while at >= 0:
        opened = data.rfind(_PARTITION, start, at)
        if opened < 0:
            raise SnapshotFormatError(f"a partition of topic {topic} has no id")
        ends[_number(data, opened + len(_PARTITION))] = _number(data, at + len(_END))
        at = data.find(_END, at + len(_END), stop)
    return ends


def saved_end_offsets(data_dir: Path, topic: str) -> dict[int, int] | None:
    """End offset of every partition of ``topic`` in the broker's snapshot file.

    Args:
        data_dir: the broker's data directory.
        topic: a topic name (Kafka's characters: letters, digits, ``._-``).

    Returns:
        None when no snapshot holds the topic yet.

    Raises:
        SnapshotFormatError: the file is laid out differently.
    """
    path = Path(data_dir) / SNAPSHOT_FILE
    try:
        with open(path, "rb") as file:
            if not file.seek(0, 2):
                return None
            with mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as data:
                return _scan(data, topic)
    except FileNotFoundError:
        return None
