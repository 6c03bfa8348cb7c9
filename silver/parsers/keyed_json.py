"""Parser of the keyed-JSON format (COUNTRY_* and ZIPF* datasets).

One message is one tuple: ``{"key": "Turkey", "count": 1, "timestamp": 1767225600000}``.
All three fields are required; ``timestamp`` is the event time in epoch
milliseconds (see ``bronze.datasets.keyed``).
"""

from __future__ import annotations

import msgspec

from silver.parsers.common import (
    ParsedTuple,
    ParseError,
    check_count,
    check_event_time,
    check_key,
    load_json_object,
)

__all__ = ["parse_keyed_json", "parse_keyed_json_batch"]


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


def _fast(payload: bytes, kafka_timestamp_ms: int) -> ParsedTuple | None:
    # The common case in one typed C decode, then the same checks in the same
    # order as parse_keyed_json; anything the decode rejects goes the slow way.
    try:
        message = _DECODER.decode(payload)
    except (msgspec.DecodeError, TypeError, RecursionError):
        return None
    return (check_key(message.key), check_count(message.count),
            check_event_time(message.timestamp, kafka_timestamp_ms))  # fmt: skip


def parse_keyed_json_batch(payloads: list[bytes], kafka_timestamps_ms: list[int]
                           ) -> list[ParsedTuple | ParseError]:  # fmt: skip
    """:func:`parse_keyed_json` over many messages: its tuple, or the error, per message.

    Well-formed messages take a typed msgspec decode (several times faster than
    ``json.loads`` plus checks); the rest go through :func:`parse_keyed_json`, so
    the results and reasons are exactly the per-message parser's.
    """
    results: list[ParsedTuple | ParseError] = []
    for payload, kafka_ms in zip(payloads, kafka_timestamps_ms, strict=True):
        try:
            parsed = _fast(payload, kafka_ms)
            results.append(parsed if parsed is not None else parse_keyed_json(payload, kafka_ms)[0])
        except ParseError as exc:
            results.append(exc)
    return results
