r"""Parsers of Wikimedia pageviews dump lines (WIKIPEDIA_PAGEVIEWS, ..._BY_LANG).

A line is ``<domain_code> <page_title> <count_views> <total_response_size>``,
space separated, e.g. ``en.m Main_Page 42 0``. A payload holds one line, or
several separated by ``\n`` (each a tuple). The lines carry no time, so the
event time is the Kafka timestamp.
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

__all__ = ["parse_pageviews", "parse_pageviews_by_lang"]


def _fields(line: str) -> tuple[str, str, int]:
    fields = line.split(" ")
    if len(fields) != 4:
        raise ParseError("bad_line", f"expected 4 space-separated fields, found {len(fields)}")
    domain, title, views, size = fields
    parse_digits(size, "bad_field:total_response_size")
    return domain, title, check_count(parse_digits(views, "bad_count"))


def parse_pageviews(payload: bytes, kafka_timestamp_ms: int) -> list[ParsedTuple]:
    """``(page_title, count_views, kafka_timestamp_ms)`` per line.

    Raises:
        ParseError: ``not_utf8``, ``empty_payload``, ``bad_line``, ``empty_key``,
            ``key_too_long``, ``bad_count`` or ``bad_field:total_response_size``.
    """
    result = []
    for line in payload_lines(payload):
        _, title, views = _fields(line)
        result.append((check_key(title), views, kafka_timestamp_ms))
    return result


def parse_pageviews_by_lang(payload: bytes, kafka_timestamp_ms: int) -> list[ParsedTuple]:
    """``(language, count_views, kafka_timestamp_ms)`` per line.

    The language is the domain code up to its first ``.`` (``en.m`` -> ``en``).

    Raises:
        ParseError: as :func:`parse_pageviews`.
    """
    result = []
    for line in payload_lines(payload):
        domain, _, views = _fields(line)
        result.append((check_key(domain.partition(".")[0]), views, kafka_timestamp_ms))
    return result
