"""Parser of the keyed-JSON format (COUNTRY_* and ZIPF* datasets).

One message is one tuple: ``{"key": "Turkey", "count": 1, "timestamp": 1767225600000}``.
All three fields are required; ``timestamp`` is the event time in epoch
milliseconds (see ``bronze.datasets.keyed``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import islice

import msgspec
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from silver.parsers.common import (
    INT64_MAX,
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

    Failed rows have a null key and zeros in ``counts`` and ``event_times_ms``.
    """

    keys: pa.Array  # string, null where the message failed
    counts: np.ndarray  # int64
    event_times_ms: np.ndarray  # int64
    errors: pa.Array  # string: the reason, null where the message parsed


# msgspec raises UnicodeDecodeError, not DecodeError, for invalid UTF-8 in a string
# that holds an escape (b'"\\u00e9\x80"'): one such message must not fail its chunk.
_UNDECODABLE = (msgspec.DecodeError, UnicodeDecodeError, TypeError, RecursionError)


def _decode_chunk(payloads: list[bytes]) -> list[_KeyedMessage | None]:
    decoded: list[_KeyedMessage | None] = []
    while True:
        # list.extend keeps what it appended before the error: resume after the bad
        # message, so the messages between bad ones still decode in one C loop.
        try:
            decoded.extend(map(_DECODER.decode, islice(payloads, len(decoded), None)))
            return decoded
        except _UNDECODABLE:
            decoded.append(None)


def _int64s(values: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """``values`` as int64, and which of them fit (msgspec reads integers up to 2**64 - 1):
    a number beyond int64 sends only its own message to the per-message parse."""
    try:
        return np.array(values, np.int64), np.ones(len(values), bool)
    except OverflowError:
        fits = np.fromiter((-INT64_MAX - 1 <= v <= INT64_MAX for v in values), bool, len(values))
        return np.array([v if f else 0 for v, f in zip(values, fits, strict=True)], np.int64), fits


def _arrow_keys(keys: list[str]) -> pa.Array:
    """``keys`` as an Arrow array; a key with a lone surrogate (JSON's ``"\\ud800"``), which
    Arrow cannot hold, becomes ``""``, which fails the quick checks, so only its own
    message takes the per-message parse."""
    try:
        return pa.array(keys, pa.string())
    except (UnicodeEncodeError, pa.ArrowException):
        return pa.array([k if k.isascii() or _encodes(k) else "" for k in keys], pa.string())


def _encodes(key: str) -> bool:
    try:
        key.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _quick_ok(messages: list[_KeyedMessage | None], kafka_ms: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray, pa.Array | None]:  # fmt: skip
    """Messages that certainly pass every check, with their counts and event times, and
    the keys of the messages that decoded (None if none did).

    The others are parsed one by one.
    """
    n = len(messages)
    ok = np.fromiter((m is not None for m in messages), bool, n)
    counts, times = np.zeros(n, np.int64), np.zeros(n, np.int64)
    present = [m for m in messages if m is not None]
    if not present:
        return ok, counts, times, None
    counts[ok], counts_fit = _int64s([m.count for m in present])
    times[ok], times_fit = _int64s([m.timestamp for m in present])
    keys = _arrow_keys([m.key for m in present])
    # ASCII, short, and not blank by str.isspace's rules (which count \x1c-\x1f as space).
    keys_ok = pc.and_(pc.and_(pc.string_is_ascii(keys),
                              pc.less_equal(pc.binary_length(keys), _QUICK_KEY_CHARS)),
                      pc.match_substring_regex(keys, "[^\t-\r\x1c-\x20]"))  # fmt: skip
    ok[ok] = keys_ok.to_numpy(zero_copy_only=False) & counts_fit & times_fit
    ok &= (
        (counts > 0)
        & (times >= kafka_ms - MAX_EVENT_SKEW_MS)
        & (times <= kafka_ms + MAX_EVENT_SKEW_MS)
    )
    return ok, counts, times, keys


def _parse_chunk(payloads: Sequence[bytes | None], kafka_ms: np.ndarray
                 ) -> tuple[pa.Array, np.ndarray, np.ndarray, list[str | None]]:  # fmt: skip
    """:func:`parse_keyed_json_batch` over one chunk; the errors as a list."""
    present = [i for i, payload in enumerate(payloads) if payload is not None]
    messages: list[_KeyedMessage | None] = [None] * len(payloads)
    if present:
        decoded = _decode_chunk([payloads[i] for i in present])
        for i, message in zip(present, decoded, strict=True):
            messages[i] = message
    ok, counts, times, quick_keys = _quick_ok(messages, kafka_ms)
    errors: list[str | None] = [None] * len(payloads)
    if ok.all():  # the usual chunk: its keys are already in Arrow, one per message
        return quick_keys, counts, times, errors
    keys = [m.key if fine else None for m, fine in zip(messages, ok, strict=True)]
    for i in np.flatnonzero(~ok).tolist():
        if payloads[i] is None:
            errors[i] = "null_value"
            continue
        try:
            keys[i], counts[i], times[i] = parse_keyed_json(payloads[i], int(kafka_ms[i]))[0]
        except ParseError as exc:
            errors[i] = exc.reason
            counts[i] = times[i] = 0
    return pa.array(keys, pa.string()), counts, times, errors


def parse_keyed_json_batch(payloads: Sequence[bytes | None], kafka_timestamps_ms: np.ndarray
                           ) -> ParsedColumns:  # fmt: skip
    """:func:`parse_keyed_json` over many messages, column-wise.

    Well-formed messages take a typed msgspec decode and vectorised checks (several
    times faster than a per-message parse); every message that fails a quick check
    goes through :func:`parse_keyed_json`, so results and reasons are exactly the
    per-message parser's. A ``None`` payload (a Kafka tombstone) is ``null_value``.
    """
    kafka_ms = np.asarray(kafka_timestamps_ms, dtype=np.int64)
    chunks = [_parse_chunk(payloads[first : first + _CHUNK], kafka_ms[first : first + _CHUNK])
              for first in range(0, len(payloads), _CHUNK)]  # fmt: skip
    if not chunks:
        empty = np.zeros(0, np.int64)
        return ParsedColumns(pa.array([], pa.string()), empty, empty, pa.array([], pa.string()))
    keys, counts, times, errors = zip(*chunks, strict=True)
    return ParsedColumns(pa.concat_arrays(keys), np.concatenate(counts), np.concatenate(times),
                         pa.array([e for chunk in errors for e in chunk], pa.string()))  # fmt: skip
