"""A keyed-JSON dataset with malformed messages of every kind mixed in, seeded.

A hostile producer's output: a clean dataset's messages, unchanged and in order,
with malformed messages inserted among them at seeded places. Each malformed
message is broken in exactly one way, so the quarantine reason silver must give
it is known in advance; the kinds are named by that reason and take turns, so
their counts are exact (:meth:`MalformedMix.expected_reasons`). A malformed
message carries the Kafka key and timestamp of the clean message it precedes,
so it lands in the partitions and event times of the real traffic.

The kinds cover every reason a keyed-JSON message can be quarantined for (the
format of the ZIPF and COUNTRY datasets, see ``bronze.datasets.keyed``).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from bronze.datasets.base import Dataset, MessageBatch, TupleBatch
from bronze.datasets.chunked import CHUNK_MESSAGES, join_messages, rebatch, take_messages
from bronze.datasets.sampling import chunk_rng

__all__ = ["MALFORMED_KINDS", "MalformedMix"]

# Its own random stream, so the clean messages stay those of the plain dataset.
_MALFORMED_STREAM = 2
_YEAR_MS = 365 * 24 * 3600 * 1000


def _keyed(key: object, count: object, timestamp: object, drop: str = "") -> bytes:
    fields = {"key": key, "count": count, "timestamp": timestamp}
    fields.pop(drop, None)
    return json.dumps(fields).encode()


def _pick(rng: np.random.Generator, *choices: Any) -> Any:
    return choices[int(rng.integers(len(choices)))]


def _not_json(rng: np.random.Generator, key: str, ts: int) -> bytes:
    truncated = _keyed(key, 1, ts)[: -int(rng.integers(1, 10))]
    return _pick(rng, truncated, b"{not json", b"", b"[" * int(rng.integers(2_000, 5_000)))  # type: ignore[no-any-return]


def _not_object(rng: np.random.Generator, key: str, ts: int) -> bytes:
    return json.dumps(_pick(rng, [key, 1, ts], None, 42, key)).encode()


def _bad_key(rng: np.random.Generator, key: str, ts: int) -> bytes:
    surrogate = b'{"key": "\\ud800", "count": 1, "timestamp": %d}' % ts  # no str can hold it
    return _pick(rng, _keyed(17, 1, ts), _keyed(None, 1, ts), _keyed([key], 1, ts), surrogate)  # type: ignore[no-any-return]


def _too_long(rng: np.random.Generator, key: str, ts: int) -> bytes:
    return _keyed(key * 4 + "x" * int(rng.integers(1_025, 4_000)), 1, ts)


def _bad_count(rng: np.random.Generator, key: str, ts: int) -> bytes:
    return _keyed(key, _pick(rng, 0, -int(rng.integers(1, 100)), "7", 2.5, True, None, 1 << 63), ts)


def _out_of_range(rng: np.random.Generator, key: str, ts: int) -> bytes:
    years = int(rng.integers(1, 10)) * _YEAR_MS + 1
    return _keyed(key, 1, _pick(rng, 0, ts + years, ts - years))


_Maker = Callable[[np.random.Generator, str, int], bytes | None]
_MAKERS: dict[str, _Maker] = {
    "not_utf8": lambda rng, key, ts: _keyed(key, 1, ts).replace(b'", ', b'\xff\xfe", ', 1),
    "not_json": _not_json,
    "not_object": _not_object,
    "missing_field:key": lambda rng, key, ts: _keyed(key, 1, ts, drop="key"),
    "missing_field:count": lambda rng, key, ts: _keyed(key, 1, ts, drop="count"),
    "missing_field:timestamp": lambda rng, key, ts: _keyed(key, 1, ts, drop="timestamp"),
    "bad_key": _bad_key,
    "empty_key": lambda rng, key, ts: _keyed(_pick(rng, "", " ", "\t\n"), 1, ts),
    "key_too_long": _too_long,
    "bad_count": _bad_count,
    "bad_timestamp": lambda rng, key, ts: _keyed(
        key, 1, _pick(rng, "yesterday", ts + 0.5, None, [ts])
    ),
    "timestamp_out_of_range": _out_of_range,
    "null_value": lambda rng, key, ts: None,  # a Kafka tombstone
}

MALFORMED_KINDS = tuple(_MAKERS)
"""The kinds of malformed message, each named by the quarantine reason it must get."""


class MalformedMix(Dataset):
    """``clean``'s messages with ``malformed`` broken ones spread among them.

    The mix holds ``clean.spec.messages + malformed`` messages; the malformed ones
    are spread evenly over the clean stream's chunks (seeded places within each),
    their kinds take turns in :data:`MALFORMED_KINDS` order. Same clean dataset,
    count and seed, same messages, whatever the batch size.
    """

    def __init__(self, clean: Dataset, malformed: int, seed: int = 0) -> None:
        """Mix ``malformed`` broken messages into ``clean`` (a keyed-JSON dataset)."""
        super().__init__(clean.spec)
        if malformed < 0:
            raise ValueError(f"malformed must be at least 0, got {malformed}")
        self.name = f"{clean.name}+malformed"
        self.clean = clean
        self.malformed = malformed
        self.seed = seed

    def expected_reasons(self) -> Counter[str]:
        """How many malformed messages of each kind the mix holds (the kinds take turns)."""
        rounds, rest = divmod(self.malformed, len(MALFORMED_KINDS))
        return Counter({kind: rounds + (i < rest) for i, kind in enumerate(MALFORMED_KINDS)})

    def tuples(self, batch_size: int = 10_000) -> Iterator[TupleBatch]:
        """The clean messages' tuples: malformed messages yield none."""
        return self.clean.tuples(batch_size)

    def messages(self, batch_size: int = 10_000) -> Iterator[MessageBatch]:
        """Clean and malformed messages in stream order, ``batch_size`` at a time."""
        parts = ((part, len(part)) for part in self._mixed_chunks())
        return rebatch(parts, batch_size, take_messages, join_messages)

    def _mixed_chunks(self) -> Iterator[MessageBatch]:
        total, inserted = self.clean.spec.messages, 0
        for index, chunk in enumerate(self.clean.messages(batch_size=CHUNK_MESSAGES)):
            end = min(total, (index + 1) * CHUNK_MESSAGES)
            due = self.malformed * end // total - inserted if total else 0
            rng = chunk_rng(self.seed, _MALFORMED_STREAM, index)
            before = np.sort(rng.integers(0, len(chunk), due)).tolist()
            yield self._insert(chunk, before, inserted, rng)
            inserted += due

    def _insert(self, chunk: MessageBatch, before: list[int], first_kind: int,
                rng: np.random.Generator) -> MessageBatch:  # fmt: skip
        keys: list[bytes] = []
        payloads: list[bytes | None] = []
        stamps: list[int] = []
        chunk_stamps = chunk.timestamps_ms.tolist()
        start = 0
        for n, place in enumerate(before):
            keys += chunk.keys[start:place]
            payloads += chunk.payloads[start:place]
            stamps += chunk_stamps[start:place]
            kind = MALFORMED_KINDS[(first_kind + n) % len(MALFORMED_KINDS)]
            key, stamp = chunk.keys[place], chunk_stamps[place]
            keys.append(key)
            payloads.append(_MAKERS[kind](rng, key.decode(), stamp))
            stamps.append(stamp)
            start = place
        keys += chunk.keys[start:]
        payloads += chunk.payloads[start:]
        stamps += chunk_stamps[start:]
        return MessageBatch(keys, payloads, np.array(stamps, dtype=np.int64))
