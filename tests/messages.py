"""Messages as a producer would write them, for the parser and bad-input tests."""

from __future__ import annotations

import json

__all__ = ["keyed_json"]


def keyed_json(key: object = "k", count: object = 1, timestamp: object = 0, **extra: object) -> bytes:
    """A keyed-JSON payload; any field may be given a wrong type or value on purpose."""
    return json.dumps({"key": key, "count": count, "timestamp": timestamp, **extra}).encode()
