"""The column-wise keyed-JSON parser gives exactly the per-message parser's results."""

from __future__ import annotations

import numpy as np
import pytest

from silver.parsers.common import MAX_EVENT_SKEW_MS, MAX_KEY_BYTES, ParseError
from silver.parsers.keyed_json import parse_keyed_json, parse_keyed_json_batch
from tests.messages import keyed_json

NOW = 1_767_225_600_000

EDGE_PAYLOADS = [
    b'{"key": "k", "count": 1, "timestamp": 1767225600000}',
    b'{"key": "k", "count": 1, "timestamp": 1767225600000, "extra": [1, 2]}',
    b'{"timestamp": 1767225600000, "count": 2, "key": "reordered"}',
    b'{"key": "", "count": 1, "timestamp": 1767225600000}',
    b'{"key": " \\t", "count": 1, "timestamp": 1767225600000}',
    b'{"key": "\\u001c\\u001f", "count": 1, "timestamp": 1767225600000}',  # str.isspace: blank
    b'{"key": "\\u00a0", "count": 1, "timestamp": 1767225600000}',  # non-ASCII blank
    b'{"key": "\\ud800", "count": 1, "timestamp": 1767225600000}',  # lone surrogate
    b'{"key": "C\\u00f4te", "count": 1, "timestamp": 1767225600000}',
    b'{"key": 7, "count": 1, "timestamp": 1767225600000}',
    b'{"key": "k", "count": 0, "timestamp": 1767225600000}',
    b'{"key": "k", "count": -3, "timestamp": 1767225600000}',
    b'{"key": "k", "count": true, "timestamp": 1767225600000}',
    b'{"key": "k", "count": 1.0, "timestamp": 1767225600000}',
    b'{"key": "k", "count": 9223372036854775807, "timestamp": 1767225600000}',
    b'{"key": "k", "count": 9223372036854775808, "timestamp": 1767225600000}',
    b'{"key": "k", "count": 18446744073709551616, "timestamp": 1767225600000}',
    b'{"key": "k", "count": 1, "timestamp": -9223372036854775808}',
    b'{"key": "k", "count": 1, "timestamp": 18446744073709551615}',
    b'{"key": "k", "count": 1, "timestamp": "1767225600000"}',
    b'{"key": "k", "count": 1}',
    b'{"count": 1, "timestamp": 1}',
    b"[1, 2]",
    b"",
    b"\xff\xfe",
    b'{"key": "\\u00e9\x80", "count": 1, "timestamp": 1767225600000}',  # bad UTF-8 after an escape
    b'{"key": "k",',
    b"[" * 5000,
    None,
]


def _one_by_one(payload: bytes | None, kafka_ms: int):
    if payload is None:
        return ("null_value",)
    try:
        return parse_keyed_json(payload, kafka_ms)[0]
    except ParseError as exc:
        return (exc.reason,)


def _batch(payloads: list[bytes | None], kafka_ms: list[int]):
    parsed = parse_keyed_json_batch(payloads, np.array(kafka_ms, dtype=np.int64))
    return [(error,) if error is not None else (key, int(count), int(event_time))
            for key, count, event_time, error in zip(parsed.keys.to_pylist(), parsed.counts,
                                                     parsed.event_times_ms,
                                                     parsed.errors.to_pylist(), strict=True)]  # fmt: skip


_keyed = keyed_json


@pytest.mark.parametrize("kafka_ms", [NOW, 0, -1])
@pytest.mark.parametrize("edge", range(len(EDGE_PAYLOADS)))
def test_each_edge_case_matches_the_per_message_parser(edge, kafka_ms):
    # Alone with good neighbours: no other edge case sends the chunk the slow way.
    payloads = [_keyed("a", 1, kafka_ms), EDGE_PAYLOADS[edge], _keyed("b", 2, kafka_ms)]
    stamps = [kafka_ms] * len(payloads)
    assert _batch(payloads, stamps) == [_one_by_one(p, kafka_ms) for p in payloads]


def test_all_edge_cases_together_match_the_per_message_parser():
    stamps = [NOW] * len(EDGE_PAYLOADS)
    assert _batch(EDGE_PAYLOADS, stamps) == [_one_by_one(p, NOW) for p in EDGE_PAYLOADS]


def test_a_bad_message_amid_good_ones_changes_only_its_own_row():
    rng = np.random.default_rng(7)
    payloads = [_keyed(f"k{i % 50}", 1 + i % 3, NOW + i) for i in range(20_000)]
    for index in rng.choice(len(payloads), size=40, replace=False):
        payloads[int(index)] = EDGE_PAYLOADS[int(rng.integers(len(EDGE_PAYLOADS)))]
    stamps = [NOW] * len(payloads)
    assert _batch(payloads, stamps) == [_one_by_one(p, NOW) for p in payloads]


def test_limits_are_the_per_message_parser_s():
    payloads = [_keyed("k" * MAX_KEY_BYTES, 1, NOW), _keyed("k" * (MAX_KEY_BYTES + 1), 1, NOW),
                _keyed("k", 1, NOW + MAX_EVENT_SKEW_MS), _keyed("k", 1, NOW + MAX_EVENT_SKEW_MS + 1),
                _keyed("k", 1, NOW - MAX_EVENT_SKEW_MS - 1)]  # fmt: skip
    results = _batch(payloads, [NOW] * len(payloads))
    assert results == [_one_by_one(p, NOW) for p in payloads]
    assert [r[0] for r in results if len(r) == 1] == ["key_too_long", "timestamp_out_of_range",
                                                      "timestamp_out_of_range"]  # fmt: skip
