"""Bronze messages -> parsed tuples or quarantine rows (pure pandas, no Spark).

Runs inside the routing step's ``applyInPandasWithState`` on executors: it must
be importable and picklable there, so it takes plain values and returns plain
pandas frames.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from silver.parsers.common import Parser
from silver.parsers.keyed_json import ParsedColumns
from silver.parsers.registry import ParseError, batch_parser_for, parser_for

__all__ = ["PARSED_COLUMNS", "parse_raw_events", "splitter_of"]

PARSED_COLUMNS = ["run_id", "splitter", "partition", "offset", "tuple_index", "key", "count",
                  "event_time_ms", "error", "payload"]  # fmt: skip


def splitter_of(partition: int, splitters: int) -> int:
    """The routing instance of a Kafka partition (one per partition by default)."""
    return partition % splitters


def _timestamps_ms(column: pd.Series) -> list[int]:
    # Spark hands pandas nanoseconds, Arrow tables may carry microseconds: go through ns.
    stamps = pd.to_datetime(column, utc=True).dt.as_unit("ns")
    return (stamps.astype("int64") // 1_000_000).tolist()


def parse_raw_events(raw: pd.DataFrame, source_type: str, splitters: int) -> pd.DataFrame:
    """Parse a frame of ``bronze.raw_events`` rows.

    Every message yields either its tuples (``tuple_index`` 0, 1, ...) or exactly
    one quarantine row whose ``error`` names the reason and keeps the payload, so
    each bronze message is accounted for (a null value, a Kafka tombstone, is
    quarantined as ``null_value``).
    """
    # A Kafka tombstone (null value) has nothing to parse; it is still accounted for.
    payloads = [None if value is None else bytes(value) for value in raw["value"]]
    stamps = _timestamps_ms(raw["timestamp"])
    batch_parse = batch_parser_for(source_type)
    if batch_parse is not None:
        frame = _one_tuple_frame(
            raw, payloads, batch_parse(payloads, np.asarray(stamps)), splitters
        )
    else:
        frame = _many_tuples_frame(raw, payloads, stamps, parser_for(source_type), splitters)
        frame = frame.astype({"tuple_index": "Int32", "count": "Int64", "event_time_ms": "Int64"})
    return frame


def _one_tuple_frame(raw: pd.DataFrame, payloads: list[bytes | None], parsed: ParsedColumns,
                     splitters: int) -> pd.DataFrame:  # fmt: skip
    # Column-wise assembly from arrays: one row per message, as many rows as the input.
    failed = pd.notna(parsed.errors)
    partitions = raw["partition"].to_numpy(dtype="int64")
    quarantined = np.full(len(payloads), None, dtype=object)
    quarantined[failed] = [p for p, bad in zip(payloads, failed, strict=True) if bad]
    return pd.DataFrame({
        "run_id": raw["run_id"].to_numpy(), "splitter": partitions % splitters,
        "partition": partitions, "offset": raw["offset"].to_numpy(dtype="int64"),
        "tuple_index": pd.arrays.IntegerArray(np.zeros(len(failed), np.int32), failed.copy()),
        "key": parsed.keys,
        "count": pd.arrays.IntegerArray(parsed.counts, failed.copy()),
        "event_time_ms": pd.arrays.IntegerArray(parsed.event_times_ms, failed.copy()),
        "error": parsed.errors, "payload": quarantined,
    }, columns=PARSED_COLUMNS)  # fmt: skip


def _many_tuples_frame(raw: pd.DataFrame, payloads: list[bytes | None], stamps: list[int],
                       parse: Parser, splitters: int) -> pd.DataFrame:  # fmt: skip
    rows = []
    for run_id, partition, offset, payload, stamp in zip(
        raw["run_id"], raw["partition"], raw["offset"], payloads, stamps, strict=True
    ):
        base = (run_id, splitter_of(int(partition), splitters), int(partition), int(offset))
        if payload is None:
            rows.append((*base, None, None, None, None, "null_value", None))
            continue
        try:
            tuples = parse(payload, stamp)
        except ParseError as exc:
            rows.append((*base, None, None, None, None, exc.reason, payload))
            continue
        for index, (key, count, event_time) in enumerate(tuples):
            rows.append((*base, index, key, count, event_time, None, None))
    return pd.DataFrame.from_records(rows, columns=PARSED_COLUMNS)
