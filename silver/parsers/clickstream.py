r"""Parser of Wikipedia clickstream rows (WIKIPEDIA_CLICKSTREAM).

A row is ``<prev>\t<curr>\t<type>\t<n>`` with ``type`` one of ``link``,
``external``, ``other``. The key is ``curr`` (the page reached), the count
``n``; a payload holds one row or several separated by ``\n``. The rows carry
no time, so the event time is the Kafka timestamp.
"""

from __future__ import annotations

from silver.parsers.common import (
    ParsedTuple,
    ParseError,
    check_count,
    check_key,
    parse_digits,
    payload_lines,
)

__all__ = ["CLICK_TYPES", "parse_clickstream"]

CLICK_TYPES = frozenset({"link", "external", "other"})


def parse_clickstream(payload: bytes, kafka_timestamp_ms: int) -> list[ParsedTuple]:
    """``(curr, n, kafka_timestamp_ms)`` per row.

    Raises:
        ParseError: ``not_utf8``, ``empty_payload``, ``bad_line``, ``bad_field:type``,
            ``empty_key``, ``key_too_long`` or ``bad_count``.
    """
    result = []
    for line in payload_lines(payload):
        fields = line.split("\t")
        if len(fields) != 4:
            raise ParseError("bad_line", f"expected 4 tab-separated fields, found {len(fields)}")
        _, current, kind, clicks = fields
        if kind not in CLICK_TYPES:
            raise ParseError("bad_field:type", repr(kind)[:40])
        result.append(
            (check_key(current), check_count(parse_digits(clicks, "bad_count")), kafka_timestamp_ms)
        )
    return result
