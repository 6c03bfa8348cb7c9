"""Bronze messages -> parsed tuples or quarantine rows (pure pandas, no Spark).

Runs inside ``mapInPandas`` on executors: it must be importable and picklable
there, so it takes plain values and returns plain pandas frames.
"""

from __future__ import annotations

from collections.abc import Iterator

import pandas as pd

from silver.parsers.registry import ParseError, parser_for

__all__ = ["PARSED_COLUMNS", "parse_raw_events", "splitter_of"]

PARSED_COLUMNS = ["run_id", "splitter", "partition", "offset", "tuple_index", "key", "count",
                  "event_time_ms", "error", "payload"]  # fmt: skip


def splitter_of(partition: int, splitters: int) -> int:
    """The routing instance of a Kafka partition (one per partition by default)."""
    return partition % splitters


def _timestamp_ms(value: object) -> int:
    return int(pd.Timestamp(value).value // 1_000_000)


def parse_raw_events(raw: pd.DataFrame, source_type: str, splitters: int) -> pd.DataFrame:
    """Parse a frame of ``bronze.raw_events`` rows.

    Every message yields either its tuples (``tuple_index`` 0, 1, ...) or exactly
    one quarantine row whose ``error`` names the reason and keeps the payload, so
    each bronze message is accounted for (a null value, a Kafka tombstone, is
    quarantined as ``null_value``).
    """
    parse = parser_for(source_type)
    rows = []
    for run_id, partition, offset, timestamp, value in zip(
        raw["run_id"], raw["partition"], raw["offset"], raw["timestamp"], raw["value"], strict=True
    ):
        base = (run_id, splitter_of(int(partition), splitters), int(partition), int(offset))
        if value is None:  # a Kafka tombstone (null value): nothing to parse, still accounted for
            rows.append((*base, None, None, None, None, "null_value", None))
            continue
        try:
            tuples = parse(bytes(value), _timestamp_ms(timestamp))
        except ParseError as exc:
            rows.append((*base, None, None, None, None, exc.reason, bytes(value)))
            continue
        for index, (key, count, event_time) in enumerate(tuples):
            rows.append((*base, index, key, count, event_time, None, None))
    frame = pd.DataFrame.from_records(rows, columns=PARSED_COLUMNS)
    return frame.astype({"tuple_index": "Int32", "count": "Int64", "event_time_ms": "Int64"})


def parse_batches(frames: Iterator[pd.DataFrame], source_type: str, splitters: int
                  ) -> Iterator[pd.DataFrame]:  # fmt: skip
    """``mapInPandas`` adapter over :func:`parse_raw_events`."""
    for frame in frames:
        yield parse_raw_events(frame, source_type, splitters)
