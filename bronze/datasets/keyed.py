"""The keyed-JSON message format of the COUNTRY and ZIPF datasets.

One message is one tuple, a compact UTF-8 JSON object::

    {"key": "Turkey", "count": 1, "timestamp": 1767225600000}

``timestamp`` is the event time in epoch milliseconds and equals the Kafka
timestamp; the Kafka message key is the key. Silver parses it with
``silver.parsers.keyed_json``.
"""

from __future__ import annotations

import json
from abc import abstractmethod

import numpy as np

from bronze.datasets.base import TupleBatch
from bronze.datasets.chunked import ChunkedDataset

__all__ = ["KeyedDataset", "keyed_json"]


def _head(key: str, count: int) -> str:
    # Non-ASCII stays UTF-8 rather than \u escapes: smaller, and readable in a console.
    return f'{{"key": {json.dumps(key, ensure_ascii=False)}, "count": {count}, "timestamp": '


def keyed_json(key: str, count: int, timestamp_ms: int) -> bytes:
    """One tuple as a keyed-JSON message payload."""
    return f"{_head(key, count)}{timestamp_ms}}}".encode()


class KeyedDataset(ChunkedDataset[np.ndarray]):
    """One key per message with count 1; a chunk's draw is the keys' vocabulary indices."""

    @abstractmethod
    def _vocabulary(self) -> np.ndarray:
        """Every key the dataset can emit (object array of ``str``)."""

    def _chunk_tuples(self, draw: np.ndarray, timestamps: np.ndarray) -> tuple[TupleBatch, None]:
        keys = self._vocabulary()[draw]
        return TupleBatch(keys, np.ones(len(draw), dtype=np.int64), timestamps), None

    def _chunk_messages(
        self, draw: np.ndarray, timestamps: np.ndarray, first: int
    ) -> tuple[list[bytes], list[bytes]]:
        vocabulary = self._vocabulary()
        # Render each distinct key's bytes once per chunk; hot keys repeat a lot.
        rendered: dict[int, tuple[bytes, bytes]] = {}
        keys, payloads = [], []
        for index, stamp in zip(draw.tolist(), timestamps.tolist(), strict=True):
            parts = rendered.get(index)
            if parts is None:
                key = vocabulary[index]
                parts = rendered[index] = (key.encode(), _head(key, 1).encode())
            keys.append(parts[0])
            payloads.append(b"%s%d}" % (parts[1], stamp))
        return keys, payloads
