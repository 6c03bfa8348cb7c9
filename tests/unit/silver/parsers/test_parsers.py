"""Each parser: the tuples it reads, and the reason it gives for each bad input."""

from __future__ import annotations

import functools
import json
import pickle

import pytest

from silver.parsers.clickstream import parse_clickstream
from silver.parsers.common import MAX_EVENT_SKEW_MS, ParseError
from silver.parsers.json_tweets import parse_election_tweet, parse_ticker_tweet
from silver.parsers.keyed_json import parse_keyed_json
from silver.parsers.pageviews import parse_pageviews, parse_pageviews_by_lang
from tests.messages import keyed_json

NOW = 1_767_225_600_000


_keyed = functools.partial(keyed_json, timestamp=NOW)


def _tweet(text="Buying $AAPL", created_at=NOW, **extra):
    return json.dumps(
        {"id": 1, "created_at": created_at, "text": text, "lang": "en", **extra}
    ).encode()


GOOD = [
    (parse_keyed_json, _keyed(key="Côte d'Ivoire", count=3), [("Côte d'Ivoire", 3, NOW)]),
    (parse_keyed_json, _keyed(timestamp=NOW - 5), [("k", 1, NOW - 5)]),
    (parse_keyed_json, _keyed(timestamp=NOW + MAX_EVENT_SKEW_MS), [("k", 1, NOW + MAX_EVENT_SKEW_MS)]),
    (parse_keyed_json, _keyed(key="🚀" * 256), [("🚀" * 256, 1, NOW)]),
    (parse_ticker_tweet, _tweet("$aapl and $TSLA, then $AAPL again. $BRK.B!"),
     [("AAPL", 1, NOW), ("TSLA", 1, NOW), ("BRK.B", 1, NOW)]),
    (parse_ticker_tweet, _tweet("Sold $NVDA. Paid $100 (US$5) for $TOOLONGX $X", NOW - 9),
     [("NVDA", 1, NOW - 9), ("X", 1, NOW - 9)]),
    (parse_election_tweet, _tweet("Go @GovAvaMorgan #Vote #vote mail me@x.org #Débat"),
     [("@govavamorgan", 1, NOW), ("#vote", 1, NOW), ("#débat", 1, NOW)]),
    (parse_pageviews, b"en.m Main_Page 42 0", [("Main_Page", 42, NOW)]),
    (parse_pageviews, "de Café 1 0\r\nen Main_Page 2 1234\n".encode(),
     [("Café", 1, NOW), ("Main_Page", 2, NOW)]),
    (parse_pageviews_by_lang, b"en.m Main_Page 42 0\nja.m.voy X 1 0", [("en", 42, NOW), ("ja", 1, NOW)]),
    (parse_clickstream, b"other-search\tMain_Page\texternal\t120", [("Main_Page", 120, NOW)]),
    (parse_clickstream, b"A\tB\tlink\t10\nC\tD\tother\t11\n", [("B", 10, NOW), ("D", 11, NOW)]),
]  # fmt: skip


@pytest.mark.parametrize(("parse", "payload", "expected"), GOOD)
def test_reads_good_messages(parse, payload, expected):
    assert parse(payload, NOW) == expected
    assert parse(bytearray(payload), NOW) == expected
    assert parse(memoryview(payload), NOW) == expected


LONG = "x" * 1025
FAR = NOW + MAX_EVENT_SKEW_MS + 1

BAD = [
    # keyed JSON
    (parse_keyed_json, b"\xff\xfe", "not_utf8"),
    (parse_keyed_json, b'{"key": "k",', "not_json"),
    (parse_keyed_json, b"", "not_json"),
    (parse_keyed_json, b"[1, 2]", "not_object"),
    (parse_keyed_json, b'{"count": 1, "timestamp": 1}', "missing_field:key"),
    (parse_keyed_json, b'{"key": "k", "timestamp": 1}', "missing_field:count"),
    (parse_keyed_json, b'{"key": "k", "count": 1}', "missing_field:timestamp"),
    (parse_keyed_json, _keyed(key=""), "empty_key"),
    (parse_keyed_json, _keyed(key=7), "bad_key"),
    (parse_keyed_json, _keyed(key=None), "bad_key"),
    (parse_keyed_json, _keyed(key=LONG), "key_too_long"),
    (parse_keyed_json, _keyed(key="é" * 513), "key_too_long"),
    (parse_keyed_json, _keyed(count=0), "bad_count"),
    (parse_keyed_json, _keyed(count=-3), "bad_count"),
    (parse_keyed_json, _keyed(count="1"), "bad_count"),
    (parse_keyed_json, _keyed(count=1.5), "bad_count"),
    (parse_keyed_json, _keyed(count=1.0), "bad_count"),
    (parse_keyed_json, _keyed(count=True), "bad_count"),
    (parse_keyed_json, _keyed(count=2**63), "bad_count"),
    (parse_keyed_json, _keyed(count=None), "bad_count"),
    (parse_keyed_json, _keyed(timestamp="2026-01-01"), "bad_timestamp"),
    (parse_keyed_json, _keyed(timestamp=float(NOW)), "bad_timestamp"),
    (parse_keyed_json, _keyed(timestamp=True), "bad_timestamp"),
    (parse_keyed_json, _keyed(timestamp=FAR), "timestamp_out_of_range"),
    (parse_keyed_json, _keyed(timestamp=NOW - MAX_EVENT_SKEW_MS - 1), "timestamp_out_of_range"),
    (parse_keyed_json, _keyed(timestamp=NOW // 1000), "timestamp_out_of_range"),
    # tweets
    (parse_ticker_tweet, b"\xc3\x28", "not_utf8"),
    (parse_ticker_tweet, b"{'text': 'x'}", "not_json"),
    (parse_ticker_tweet, b'"just a string"', "not_object"),
    (parse_ticker_tweet, json.dumps({"created_at": NOW}).encode(), "missing_field:text"),
    (parse_ticker_tweet, json.dumps({"text": "$AAPL"}).encode(), "missing_field:created_at"),
    (parse_ticker_tweet, _tweet(text=["$AAPL"]), "bad_field:text"),
    (parse_ticker_tweet, _tweet(created_at="Wed Oct 10 20:19:24 +0000 2018"), "bad_timestamp"),
    (parse_ticker_tweet, _tweet(created_at=FAR), "timestamp_out_of_range"),
    (parse_ticker_tweet, _tweet(text="no cashtags, $100 or US$5 here"), "no_keys"),
    (parse_ticker_tweet, _tweet(text=""), "no_keys"),
    (parse_election_tweet, _tweet(text="nothing to see"), "no_keys"),
    (parse_election_tweet, _tweet(text="#" + LONG), "key_too_long"),
    (parse_election_tweet, _tweet(text="@x", created_at=None), "bad_timestamp"),
    # pageviews
    (parse_pageviews, b"en Main\xff 1 0", "not_utf8"),
    (parse_pageviews, b"", "empty_payload"),
    (parse_pageviews, b"\n\r\n", "empty_payload"),
    (parse_pageviews, b"en Main_Page 1", "bad_line"),
    (parse_pageviews, b"en Main Page 1 0", "bad_line"),
    (parse_pageviews, b"en\tMain_Page\t1\t0", "bad_line"),
    (parse_pageviews, b"en  1 0", "empty_key"),
    (parse_pageviews, f"en {LONG} 1 0".encode(), "key_too_long"),
    (parse_pageviews, b"en Main_Page 0 0", "bad_count"),
    (parse_pageviews, b"en Main_Page -1 0", "bad_count"),
    (parse_pageviews, b"en Main_Page 1.5 0", "bad_count"),
    (parse_pageviews, b"en Main_Page many 0", "bad_count"),
    (parse_pageviews, "en Main_Page ² 0".encode(), "bad_count"),
    (parse_pageviews, b"en Main_Page 1 -", "bad_field:total_response_size"),
    (parse_pageviews, b"en Main_Page 1 0\nen Main_Page 1", "bad_line"),
    (parse_pageviews_by_lang, b".m Main_Page 1 0", "empty_key"),
    (parse_pageviews_by_lang, b"en Main_Page 0 0", "bad_count"),
    # clickstream
    (parse_clickstream, b"\xff\tB\tlink\t10", "not_utf8"),
    (parse_clickstream, b"", "empty_payload"),
    (parse_clickstream, b"A\tB\tlink", "bad_line"),
    (parse_clickstream, b"A B link 10", "bad_line"),
    (parse_clickstream, b"A\tB\tlink\t10\textra", "bad_line"),
    (parse_clickstream, b"A\tB\tredirect\t10", "bad_field:type"),
    (parse_clickstream, b"A\t\tlink\t10", "empty_key"),
    (parse_clickstream, f"A\t{LONG}\tlink\t10".encode(), "key_too_long"),
    (parse_clickstream, b"A\tB\tlink\t0", "bad_count"),
    (parse_clickstream, b"A\tB\tlink\tten", "bad_count"),
    # hostile or broken producers
    (parse_keyed_json, b"[" * 100_000, "not_json"),  # nesting deeper than the recursion limit
    (parse_ticker_tweet, b'{"text": ' + b"{" * 100_000, "not_json"),
    (parse_keyed_json, b'{"key": "\\ud800", "count": 1, "timestamp": %d}' % NOW, "bad_key"),
    (parse_election_tweet, _tweet(text="#ok", created_at=10**40), "timestamp_out_of_range"),
    (parse_keyed_json, _keyed(key=" \t "), "empty_key"),
    (parse_keyed_json, _keyed(key="k" * (1 << 20)), "key_too_long"),  # a 1 MB key
    (parse_keyed_json, b'{"key": "k", "count": NaN, "timestamp": %d}' % NOW, "bad_count"),
    (parse_keyed_json, b'{"key": "k", "count": -Infinity, "timestamp": %d}' % NOW, "bad_count"),
    (parse_keyed_json, _keyed(timestamp=-1), "timestamp_out_of_range"),
]


@pytest.mark.parametrize(("parse", "payload", "reason"), BAD)
def test_bad_messages_give_their_reason(parse, payload, reason):
    with pytest.raises(ParseError) as caught:
        parse(payload, NOW)
    assert caught.value.reason == reason
    assert str(caught.value).startswith(reason)


def test_parse_error_is_a_value_error_that_pickles():
    error = ParseError("bad_count", "'x'")
    assert isinstance(error, ValueError)
    again = pickle.loads(pickle.dumps(error))  # noqa: S301 (own data)
    assert (again.reason, again.detail, str(again)) == ("bad_count", "'x'", "bad_count: 'x'")


@pytest.mark.parametrize("parse", [parse_keyed_json, parse_ticker_tweet, parse_pageviews])
def test_non_bytes_payload(parse):
    with pytest.raises(ParseError) as caught:
        parse(None, NOW)
    assert caught.value.reason == "not_bytes"


def test_null_value_is_quarantined_not_dropped():
    import pyarrow as pa

    from silver.parsing import parse_raw_events

    raw = pa.table({"run_id": ["r", "r"], "partition": pa.array([0, 1], pa.int32()),
                    "offset": [5, 6], "timestamp": pa.array([NOW, NOW], pa.timestamp("ms", "UTC")),
                    "value": [None, _keyed(key="a")]})  # fmt: skip
    parsed = parse_raw_events(raw, "ZIPF", 2).to_pandas()
    assert parsed["error"].tolist()[0] == "null_value"
    assert parsed["key"].tolist()[1] == "a"
    assert len(parsed) == 2
