"""Generated messages into every parser: tuples or a ParseError, and nothing lost on the way.

Payloads are arbitrary bytes, arbitrary JSON, messages shaped like each format
with arbitrary field values, and such messages cut short or with a byte
changed. Properties:

- a parser returns well-formed tuples or raises :class:`ParseError` with a
  reason, never any other exception;
- the batch path (``parse_raw_events``, and the column-wise keyed-JSON parser)
  gives exactly the per-message parser's tuples and reasons;
- after routing, every message is either routed (each of its tuples to a
  worker) or quarantined exactly once with its reason and payload.
"""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

from silver.parsers.clickstream import CLICK_TYPES
from silver.parsers.common import INT64_MAX, MAX_KEY_BYTES, ParseError
from silver.parsers.keyed_json import parse_keyed_json, parse_keyed_json_batch
from silver.parsers.registry import _PARSERS, parser_for
from silver.parsing import parse_raw_events
from silver.routing import route_splitter_rows
from tests.unit.strategies import damaged

SOURCES = ["ZIPF", "TWITTER_TICKER", "TWITTER_ELECTION", "WIKIPEDIA_PAGEVIEWS",
           "WIKIPEDIA_PAGEVIEWS_BY_LANG", "WIKIPEDIA_CLICKSTREAM"]  # fmt: skip
NOW = 1_767_225_600_000
YEAR_MS = 365 * 24 * 3600 * 1000

# Kafka timestamps pandas can hold as datetime64[ns] (1970 .. 2200), plus the epoch.
kafka_times = st.one_of(st.just(NOW), st.integers(0, 7_258_118_400_000))
json_scalars = st.one_of(st.none(), st.booleans(), st.integers(),
                         st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=20))  # fmt: skip
json_values = st.recursive(
    json_scalars,
    lambda children: st.one_of(st.lists(children, max_size=4),
                               st.dictionaries(st.text(max_size=8), children, max_size=4)),
    max_leaves=12,
)  # fmt: skip
keys = st.one_of(st.text(max_size=12), st.sampled_from(["k", " ", "\x1c", "\u00a0", "\ud800"]),
                 st.text(min_size=MAX_KEY_BYTES // 4 - 2, max_size=MAX_KEY_BYTES // 4 + 2),
                 st.just("é" * (MAX_KEY_BYTES // 2 + 1)), json_values)  # fmt: skip
counts = st.one_of(st.integers(-3, 5), st.sampled_from([INT64_MAX, INT64_MAX + 1, 1 << 64]),
                   st.integers(), json_values)  # fmt: skip


@st.composite
def event_times(draw: st.DrawFn) -> object:
    return draw(st.one_of(
        st.integers(NOW - 2 * YEAR_MS, NOW + 2 * YEAR_MS), st.just(NOW),
        st.sampled_from([NOW - YEAR_MS, NOW + YEAR_MS, NOW + YEAR_MS + 1, -(1 << 63), 1 << 64]),
        json_values,
    ))  # fmt: skip


@st.composite
def keyed_messages(draw: st.DrawFn) -> bytes:
    fields = {"key": draw(keys), "count": draw(counts), "timestamp": draw(event_times())}
    kept = {name: value for name, value in fields.items() if draw(st.integers(0, 9))}
    kept.update(draw(st.dictionaries(st.text(max_size=6), json_values, max_size=2)))
    return json.dumps(kept, ensure_ascii=draw(st.booleans())).encode("utf-8", "surrogatepass")


tokens = st.one_of(st.text(max_size=10),
                   st.from_regex(r"[$@#][A-Za-z0-9_.]{0,8}", fullmatch=True),
                   st.sampled_from(["$AAPL", "$brk.b", "US$5", "$100", "@Gov", "#Debate", "é"]))  # fmt: skip


@st.composite
def tweets(draw: st.DrawFn) -> bytes:
    text = " ".join(draw(st.lists(tokens, max_size=6)))
    fields = {"text": draw(st.one_of(st.just(text), json_values)),
              "created_at": draw(event_times())}  # fmt: skip
    kept = {name: value for name, value in fields.items() if draw(st.integers(0, 9))}
    return json.dumps(kept, ensure_ascii=draw(st.booleans())).encode("utf-8", "surrogatepass")


fields = st.one_of(st.text(max_size=10), st.from_regex(r"[0-9]{1,20}", fullmatch=True),
                   st.sampled_from(["0", "-1", "+3", "en.m", "Main_Page", "", "\uff11"]))  # fmt: skip


@st.composite
def line_payloads(draw: st.DrawFn, separator: str, width: int) -> bytes:
    def line() -> str:
        values = draw(st.lists(fields, min_size=width - 1, max_size=width + 1))
        if separator == "\t" and len(values) >= 3 and draw(st.booleans()):
            values[2] = draw(st.sampled_from(sorted(CLICK_TYPES)))
        return separator.join(values)

    ending = draw(st.sampled_from(["\n", "\r\n", "\n\n"]))
    text = ending.join(line() for _ in range(draw(st.integers(0, 3))))
    return text.encode("utf-8", "surrogatepass")


SHAPED = {"ZIPF": keyed_messages(), "TWITTER_TICKER": tweets(), "TWITTER_ELECTION": tweets(),
          "WIKIPEDIA_PAGEVIEWS": line_payloads(" ", 4),
          "WIKIPEDIA_PAGEVIEWS_BY_LANG": line_payloads(" ", 4),
          "WIKIPEDIA_CLICKSTREAM": line_payloads("\t", 4)}  # fmt: skip


def payloads_for(source: str) -> st.SearchStrategy[bytes]:
    shaped = SHAPED[source]
    return st.one_of(shaped, shaped, damaged(shaped), st.binary(max_size=64),
                     json_values.map(lambda v: json.dumps(v).encode()))  # fmt: skip


def _per_message(source: str, payload: bytes | None, kafka_ms: int) -> list[tuple] | str:
    """The message's tuples, or its quarantine reason."""
    if payload is None:
        return "null_value"
    try:
        return parser_for(source)(payload, kafka_ms)
    except ParseError as exc:
        return exc.reason


def _raw(payloads: list[bytes | None], stamps: list[int]) -> pa.Table:
    n = len(payloads)
    return pa.table({
        "run_id": pa.array(["r"] * n, pa.string()),
        "partition": pa.array([i % 3 for i in range(n)], pa.int32()),
        "offset": pa.array(range(n), pa.int64()),
        "timestamp": pa.array(stamps, pa.timestamp("ms", tz="UTC")).cast(pa.timestamp("ns", tz="UTC")),
        "value": pa.array(payloads, pa.binary()),
    })  # fmt: skip


def test_the_sources_cover_every_parser():
    assert {parser_for(source) for source in SOURCES} == set(_PARSERS.values())


@pytest.mark.parametrize("source", SOURCES)
@given(data=st.data(), kafka_ms=kafka_times)
def test_a_parser_returns_checked_tuples_or_raises_parse_error(source, data, kafka_ms):
    payload = data.draw(payloads_for(source))
    result = _per_message(source, payload, kafka_ms)
    if isinstance(result, str):
        assert result, "a ParseError needs a reason"
        return
    assert result, "a parsed message yields at least one tuple, or it would vanish"
    for key, count, event_time in result:
        assert isinstance(key, str) and key.strip() and not key.isspace()
        assert len(key.encode("utf-8")) <= MAX_KEY_BYTES
        assert type(count) is int and 0 < count <= INT64_MAX
        assert type(event_time) is int and abs(event_time - kafka_ms) <= YEAR_MS


@given(payloads=st.lists(st.one_of(st.none(), payloads_for("ZIPF")), max_size=12),
       kafka_ms=st.integers(-(1 << 63), INT64_MAX))  # fmt: skip
def test_keyed_json_columns_equal_the_per_message_parser(payloads, kafka_ms):
    parsed = parse_keyed_json_batch(payloads, np.full(len(payloads), kafka_ms, np.int64))
    keys, errors = parsed.keys.to_pylist(), parsed.errors.to_pylist()
    for i, payload in enumerate(payloads):
        expected = _per_message("ZIPF", payload, kafka_ms)
        if isinstance(expected, str):
            assert (errors[i], keys[i]) == (expected, None)
        else:
            [(key, count, event_time)] = expected
            got = (keys[i], int(parsed.counts[i]), int(parsed.event_times_ms[i]))
            assert (errors[i], got) == (None, (key, count, event_time))
    assert parse_keyed_json is parser_for("ZIPF")


def _messages(source: str) -> st.SearchStrategy[list[tuple[bytes | None, int]]]:
    return st.lists(st.tuples(st.one_of(st.none(), payloads_for(source)), kafka_times),
                    max_size=10)  # fmt: skip


@pytest.mark.parametrize("source", SOURCES)
@given(data=st.data(), workers=st.integers(1, 9))
def test_every_message_is_routed_or_quarantined_once_as_alone(source, data, workers):
    messages = data.draw(_messages(source))
    payloads = [payload for payload, _ in messages]
    stamps = [stamp for _, stamp in messages]
    parsed = parse_raw_events(_raw(payloads, stamps), source, splitters=1)
    routed = route_splitter_rows(parsed, None, "KEY", workers, {})[0].to_pandas()
    assert set(routed["offset"]) <= set(range(len(messages)))
    for offset, (payload, stamp) in enumerate(messages):
        rows = routed[routed["offset"] == offset]
        assert (rows["partition"] == offset % 3).all()
        expected = _per_message(source, payload, stamp)
        if isinstance(expected, str):  # quarantined once, with its reason and payload
            assert len(rows) == 1, rows
            row = rows.iloc[0]
            assert (row["record"], row["worker"], row["error"]) == ("quarantine", -1, expected)
            assert row["payload"] == payload
            continue
        assert (rows["record"] == "tuple").all() and rows["error"].isna().all()
        assert rows["worker"].between(0, workers - 1).all()
        assert rows["tuple_index"].tolist() == list(range(len(expected)))
        got = list(zip(rows["key"], rows["count"].astype(int), rows["event_time_ms"].astype(int),
                       strict=True))  # fmt: skip
        assert got == expected
