"""Parser of the keyed-JSON format (COUNTRY_* and ZIPF* datasets).

One message is one tuple: ``{"key": "Turkey", "count": 1, "timestamp": 1767225600000}``.
All three fields are required; ``timestamp`` is the event time in epoch
milliseconds (see ``bronze.datasets.keyed``).
"""

from __future__ import annotations

from silver.parsers.common import (
    ParsedTuple,
    ParseError,
    check_count,
    check_event_time,
    check_key,
    load_json_object,
)

__all__ = ["parse_keyed_json"]


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
