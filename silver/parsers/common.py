"""What every parser shares: the error type and the checks on a parsed tuple.

A parser is a plain function ``parse(payload, kafka_timestamp_ms)`` returning
``[(key, count, event_time_ms), ...]``; it runs per message inside Spark pandas
UDFs on executors, so everything here is stateless, picklable and cheap. A
message that cannot be parsed raises :class:`ParseError`, whose ``reason`` is a
short, stable code that silver.quarantine stores and groups by.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

__all__ = [
    "INT64_MAX",
    "MAX_EVENT_SKEW_MS",
    "MAX_KEY_BYTES",
    "ParseError",
    "ParsedTuple",
    "Parser",
    "check_count",
    "check_event_time",
    "check_key",
    "decode_utf8",
    "load_json_object",
    "parse_digits",
    "payload_lines",
]

ParsedTuple = tuple[str, int, int]
Parser = Callable[[bytes, int], list[ParsedTuple]]

MAX_KEY_BYTES = 1024
# Event times further than this from the Kafka timestamp are clock or unit bugs
# (seconds sent as milliseconds, say), and would open absurd windows downstream.
MAX_EVENT_SKEW_MS = 365 * 24 * 3600 * 1000
INT64_MAX = (1 << 63) - 1


class ParseError(ValueError):
    """A message that cannot be turned into tuples.

    Attributes:
        reason: a short machine-friendly code, e.g. ``not_utf8``, ``not_json``,
            ``missing_field:text``, ``empty_key``, ``key_too_long``, ``bad_count``,
            ``bad_timestamp``, ``timestamp_out_of_range``, ``no_keys``.
        detail: human-readable context, possibly empty.
    """

    def __init__(self, reason: str, detail: str = "") -> None:
        """Build the error.

        Args:
            reason: the machine-friendly code.
            detail: optional human-readable context (kept out of ``reason``).
        """
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason
        self.detail = detail

    def __reduce__(self) -> tuple[Any, ...]:
        # Keep (reason, detail) intact when Spark pickles the error across processes.
        return (type(self), (self.reason, self.detail))


def decode_utf8(payload: bytes) -> str:
    """The payload as text; ``not_utf8`` if it is not valid UTF-8."""
    try:
        # str(buffer, encoding) accepts bytes, bytearray and memoryview alike.
        return str(payload, "utf-8")
    except UnicodeDecodeError:
        raise ParseError("not_utf8") from None
    except TypeError:
        raise ParseError("not_bytes", type(payload).__name__) from None


def load_json_object(payload: bytes) -> dict[str, Any]:
    """A JSON object payload; ``not_utf8``, ``not_json`` or ``not_object`` otherwise."""
    text = decode_utf8(payload)
    try:
        value = json.loads(text)
    except ValueError:
        raise ParseError("not_json") from None
    except RecursionError:  # e.g. 100k nested brackets: hostile or broken, never a message
        raise ParseError("not_json", "nested too deeply") from None
    if not isinstance(value, dict):
        raise ParseError("not_object", type(value).__name__)
    return value


def check_key(key: Any) -> str:
    """A non-blank ``str`` key of at most ``MAX_KEY_BYTES`` UTF-8 bytes, valid Unicode."""
    if not isinstance(key, str):
        raise ParseError("bad_key", type(key).__name__)
    if not key or key.isspace():
        raise ParseError("empty_key")
    # A str of n code points encodes to at most 4n bytes: encode only long keys.
    if len(key) > MAX_KEY_BYTES // 4 and len(key.encode("utf-8", "surrogatepass")) > MAX_KEY_BYTES:
        raise ParseError("key_too_long")
    if not key.isascii():
        try:  # JSON's "\ud800" escapes decode to lone surrogates, which no table can store
            key.encode("utf-8")
        except UnicodeEncodeError:
            raise ParseError("bad_key", "not valid Unicode") from None
    return key


def check_count(count: Any) -> int:
    """A positive integer count that fits int64 (``bool`` and floats are rejected)."""
    if type(count) is not int or not 0 < count <= INT64_MAX:
        raise ParseError("bad_count", repr(count)[:40])
    return count


def check_event_time(event_time_ms: Any, kafka_timestamp_ms: int) -> int:
    """An integer event time within ``MAX_EVENT_SKEW_MS`` of the Kafka timestamp."""
    if type(event_time_ms) is not int:
        raise ParseError("bad_timestamp", repr(event_time_ms)[:40])
    if abs(event_time_ms - kafka_timestamp_ms) > MAX_EVENT_SKEW_MS:
        raise ParseError("timestamp_out_of_range", str(event_time_ms))
    return event_time_ms


def payload_lines(payload: bytes) -> list[str]:
    """The non-empty lines of a payload (CRLF or LF endings); ``empty_payload`` if none."""
    lines = [line.rstrip("\r") for line in decode_utf8(payload).split("\n")]
    lines = [line for line in lines if line]
    if not lines:
        raise ParseError("empty_payload")
    return lines


def parse_digits(text: str, reason: str) -> int:
    """An unsigned decimal integer (ASCII digits only, no sign or spaces)."""
    if not (text.isascii() and text.isdigit()):
        raise ParseError(reason, repr(text)[:40])
    return int(text)
