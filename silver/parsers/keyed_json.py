"""Parser of the keyed-JSON format (COUNTRY_* and ZIPF* datasets).

One message is one tuple: ``{"key": "Turkey", "count": 1, "timestamp": 1767225600000}``.
All three fields are required; ``timestamp`` is the event time in epoch
milliseconds (see ``bronze.datasets.keyed``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import msgspec
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from silver.parsers.common import (
    MAX_EVENT_SKEW_MS,
    MAX_KEY_BYTES,
    ParsedTuple,
    ParseError,
    check_count,
    check_event_time,
    check_key,
    load_json_object,
)

__all__ = ["ParsedColumns", "parse_keyed_json", "parse_keyed_json_batch"]


def parse_keyed_json(payload: bytes, kafka_timestamp_ms: int) -> list[ParsedTuple]:
    """The message's single ``(key, count, event_time_ms)`` tuple.

    Args:
        payload: the Kafka message value.
        kafka_timestamp_ms: the Kafka record timestamp, to bound the event time.

    Raises:
        ParseError: ``not_utf8``, ``not_json``, ``not_object``, ``missing_field:<name>``,
            ``bad_key``, ``empty_key``, ``key_too_long``, ``bad_count``,
            ``bad_timestamp`` or ``timestamp_out_of_range``.
    """
    message = load_json_object(payload)
    try:
        key, count, event_time = message["key"], message["count"], message["timestamp"]
    except KeyError as missing:
        raise ParseError(f"missing_field:{missing.args[0]}") from None
    return [(check_key(key), check_count(count), check_event_time(event_time, kafka_timestamp_ms))]


class _KeyedMessage(msgspec.Struct):
    key: str
    count: int
    timestamp: int


_DECODER = msgspec.json.Decoder(_KeyedMessage)
_CHUNK = 8192
_QUICK_KEY_CHARS = MAX_KEY_BYTES // 4  # shorter ASCII keys can never be too long


@dataclass(frozen=True)
class ParsedColumns:
    """One tuple per message, column-wise; ``errors[i]`` is set where message i failed.

    Failed rows have ``keys[i] = None`` and zeros in ``counts`` and ``event_times_ms``.
    """

    keys: np.ndarray  # object: str or None
    counts: np.ndarray  # int64
    event_times_ms: np.ndarray  # int64
    errors: np.ndarray  # object: reason or None


# msgspec raises UnicodeDecodeError, not DecodeError, for invalid UTF-8 in a string
# that holds an escape (b'"\\u00e9\x80"'): one such message must not fail its chunk.
_UNDECODABLE = (msgspec.DecodeError, UnicodeDecodeError, TypeError, RecursionError)


def _decode_chunk(payloads: list[bytes]) -> list[_KeyedMessage | None]:
    try:  # the common case: every message of the chunk decodes in one pass
        return list(map(_DECODER.decode, payloads))
    except _UNDECODABLE:
        pass
    decoded: list[_KeyedMessage | None] = []
    for payload in payloads:
        try:
            decoded.append(_DECODER.decode(payload))
        except _UNDECODABLE:
            decoded.append(None)
    return decoded


def _quick_ok(messages: list[_KeyedMessage | None], kafka_ms: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # fmt: skip
    """Messages that certainly pass every check, with their counts and event times.

    The others (and a whole chunk holding a number beyond int64) are parsed one by one.
    """
    n = len(messages)
    ok = np.fromiter((m is not None for m in messages), bool, n)
    counts, times = np.zeros(n, np.int64), np.zeros(n, np.int64)
    present = [m for m in messages if m is not None]
    if not present:
        return ok, counts, times
    try:
        counts[ok] = [m.count for m in present]
        times[ok] = [m.timestamp for m in present]
    except OverflowError:
        return np.zeros(n, bool), counts, times
    try:
        keys = pa.array([m.key for m in present], pa.string())
    except (UnicodeEncodeError, pa.ArrowException):  # a lone surrogate somewhere
        return np.zeros(n, bool), counts, times
    # ASCII, short, and not blank by str.isspace's rules (which count \x1c-\x1f as space).
    keys_ok = pc.and_(pc.and_(pc.string_is_ascii(keys),
                              pc.less_equal(pc.binary_length(keys), _QUICK_KEY_CHARS)),
                      pc.match_substring_regex(keys, "[^\t-\r\x1c-\x20]"))  # fmt: skip
    ok[ok] = keys_ok.to_numpy(zero_copy_only=False)
    ok &= (
        (counts > 0)
        & (times >= kafka_ms - MAX_EVENT_SKEW_MS)
        & (times <= kafka_ms + MAX_EVENT_SKEW_MS)
    )
    return ok, counts, times


def parse_keyed_json_batch(payloads: Sequence[bytes | None], kafka_timestamps_ms: np.ndarray
                           ) -> ParsedColumns:  # fmt: skip
    """:func:`parse_keyed_json` over many messages, column-wise.

    Well-formed messages take a typed msgspec decode and vectorised checks (several
    times faster than a per-message parse); every message that fails a quick check
    goes through :func:`parse_keyed_json`, so results and reasons are exactly the
    per-message parser's. A ``None`` payload (a Kafka tombstone) is ``null_value``.
    """
    n = len(payloads)
    kafka_ms = np.asarray(kafka_timestamps_ms, dtype=np.int64)
    keys = np.full(n, None, dtype=object)
    counts = np.zeros(n, dtype=np.int64)
    times = np.zeros(n, dtype=np.int64)
    errors = np.full(n, None, dtype=object)
    for first in range(0, n, _CHUNK):
        chunk = payloads[first : first + _CHUNK]
        present = [i for i, payload in enumerate(chunk) if payload is not None]
        messages: list[_KeyedMessage | None] = [None] * len(chunk)
        if present:
            decoded = _decode_chunk([chunk[i] for i in present])
            for i, message in zip(present, decoded, strict=True):
                messages[i] = message
        ok, chunk_counts, chunk_times = _quick_ok(messages, kafka_ms[first : first + len(chunk)])
        rows = first + np.flatnonzero(ok)
        keys[rows] = [m.key for m, fine in zip(messages, ok, strict=True) if fine]
        counts[rows] = chunk_counts[ok]
        times[rows] = chunk_times[ok]
        for i in np.flatnonzero(~ok).tolist():
            row = first + i
            if chunk[i] is None:
                errors[row] = "null_value"
                continue
            try:
                keys[row], counts[row], times[row] = parse_keyed_json(chunk[i], int(kafka_ms[row]))[
                    0
                ]
            except ParseError as exc:
                errors[row] = exc.reason
    return ParsedColumns(keys, counts, times, errors)
