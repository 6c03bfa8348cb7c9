"""Bronze rows -> parsed tuples or quarantine rows, without Spark."""

from __future__ import annotations

import functools
import json

import pyarrow as pa
import pytest

from silver.parsing import parse_raw_events
from tests.messages import keyed_json

NOW = 1_767_225_600_000


def _raw(payloads: list[bytes], unit: str) -> pa.Table:
    stamps = pa.array([NOW * 1000 + 123] * len(payloads), pa.timestamp("us", tz="UTC"))
    return pa.table({
        "run_id": ["r"] * len(payloads), "partition": pa.array(range(len(payloads)), pa.int32()),
        "offset": pa.array([7] * len(payloads), pa.int64()),
        "timestamp": stamps.cast(pa.timestamp(unit, tz="UTC"), safe=False), "value": payloads,
    })  # fmt: skip


_keyed = functools.partial(keyed_json, timestamp=NOW)


@pytest.mark.parametrize("unit", ["ns", "us", "ms", "s"])
@pytest.mark.parametrize("source", ["ZIPF", "TWITTER_TICKER"])
def test_every_message_gives_its_tuples_or_one_quarantine_row(unit, source):
    tweet = json.dumps({"created_at": NOW, "text": "$AAPL up, $TSLA down"}).encode()
    good = _keyed("k", 3) if source == "ZIPF" else tweet
    payloads = [good, b"\xff", b"{}", _keyed("", 1), _keyed("k", -2), _keyed("k", True),
                _keyed("k", 1, timestamp=NOW + 400 * 24 * 3600 * 1000)]  # fmt: skip
    parsed = parse_raw_events(_raw(payloads, unit), source, splitters=2).to_pandas()
    tuples = parsed[parsed["error"].isna()]
    expected = [("k", 3)] if source == "ZIPF" else [("AAPL", 1), ("TSLA", 1)]
    assert list(zip(tuples["key"], tuples["count"], strict=True)) == expected
    assert (tuples["event_time_ms"] == NOW).all()
    assert tuples["tuple_index"].tolist() == list(range(len(expected)))
    errors = parsed[parsed["error"].notna()]
    assert errors["partition"].tolist() == [1, 2, 3, 4, 5, 6]
    assert errors["payload"].tolist() == payloads[1:]
    assert errors["splitter"].tolist() == [p % 2 for p in range(1, 7)]
    if source == "ZIPF":
        assert errors["error"].tolist() == ["not_utf8", "missing_field:key", "empty_key",
                                            "bad_count", "bad_count", "timestamp_out_of_range"]  # fmt: skip


def test_a_message_without_a_kafka_timestamp_is_quarantined_not_lost():
    raw = _raw([_keyed("k", 1), _keyed("k", 2)], "us")
    raw = raw.set_column(raw.schema.get_field_index("timestamp"), "timestamp",
                         pa.array([None, NOW * 1000], pa.timestamp("us", tz="UTC")))  # fmt: skip
    parsed = parse_raw_events(raw, "ZIPF", splitters=1)
    assert parsed["error"].to_pylist() == ["timestamp_out_of_range", None]
    assert parsed["count"].to_pylist() == [None, 2]


def test_sliced_chunks_keep_each_quarantined_payload():
    payloads = [_keyed("k", 1), b"\xff", _keyed("k", 2), b"{}", _keyed("k", 3)]
    raw = _raw(payloads, "us")
    pieces = pa.concat_tables([raw.slice(0, 2), raw.slice(2, 2), raw.slice(4, 1)])
    parsed = parse_raw_events(pieces, "ZIPF", splitters=1)
    assert parsed["payload"].to_pylist() == [None, b"\xff", None, b"{}", None]
    assert parsed["count"].to_pylist() == [1, None, 2, None, 3]


def test_counts_beyond_float_precision_stay_exact_beside_a_quarantined_line():
    raw = _raw([b"en Foo 9007199254740993 0", b"bad line"], "us")
    parsed = parse_raw_events(raw, "WIKIPEDIA_PAGEVIEWS", splitters=1)
    assert parsed["count"].to_pylist() == [9007199254740993, None]
