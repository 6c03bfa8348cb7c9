"""Bronze messages -> parsed tuples or quarantine rows (pure Arrow, no Spark).

Runs inside the routing step's ``applyInPandasWithState`` on executors: it must
be importable and picklable there, so it takes plain values and returns plain
Arrow tables.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from silver.parsers.common import Parser
from silver.parsers.keyed_json import ParsedColumns
from silver.parsers.registry import ParseError, batch_parser_for, parser_for
from silver.schemas import ROUTED_ARROW

__all__ = ["PARSED_ARROW", "parse_raw_events", "splitter_of"]

PARSED_ARROW = pa.schema([ROUTED_ARROW.field(name) for name in (
    "run_id", "splitter", "partition", "offset", "tuple_index", "key", "count", "event_time_ms",
    "error", "payload")])  # fmt: skip
"""A parsed tuple (``tuple_index`` 0, 1, ...), or a quarantined message: ``error`` set,
the tuple's fields null and the message's value in ``payload`` (null for a tombstone)."""

_MS_PER = {"s": (1000, 1), "ms": (1, 1), "us": (1, 1000), "ns": (1, 1_000_000)}
# What a missing timestamp gave when it went through pandas (NaT as int64 ns, in ms):
# every event time then falls out of range, so its message is quarantined, not lost.
_NO_TIMESTAMP_MS = np.iinfo(np.int64).min // 1_000_000


def splitter_of(partition: int, splitters: int) -> int:
    """The routing instance of a Kafka partition (one per partition by default)."""
    return partition % splitters


def _timestamps_ms(column: pa.ChunkedArray | pa.Array) -> np.ndarray:
    """A timestamp column of any unit as epoch milliseconds (floored)."""
    times, divide = _MS_PER[column.type.unit]
    ticks = pc.fill_null(column.cast(pa.int64()), 0)
    # Seconds past int64's milliseconds fail loudly rather than wrap.
    stamps = (pc.multiply_checked(ticks, times) if times != 1 else ticks).to_numpy() // divide
    if column.null_count:
        stamps[column.is_null().to_numpy(zero_copy_only=False)] = _NO_TIMESTAMP_MS
    return stamps


def parse_raw_events(raw: pa.Table, source_type: str, splitters: int) -> pa.Table:
    """Parse a table of ``bronze.raw_events`` rows (``PARSED_ARROW`` rows out).

    Every message yields either its tuples (``tuple_index`` 0, 1, ...) or exactly
    one quarantine row whose ``error`` names the reason and keeps the payload, so
    each bronze message is accounted for (a null value, a Kafka tombstone, is
    quarantined as ``null_value``).
    """
    # A Kafka tombstone (null value) has nothing to parse; it is still accounted for.
    # (Through numpy: 5x faster than to_pylist's scalar per value.)
    values = raw.column("value").combine_chunks()  # pyarrow's if_else mishandles sliced chunks
    payloads = values.to_numpy(zero_copy_only=False).tolist()
    stamps = _timestamps_ms(raw.column("timestamp"))
    partitions = raw.column("partition").to_numpy().astype(np.int64)
    batch_parse = batch_parser_for(source_type)
    if batch_parse is not None:
        return _one_tuple_table(raw, values, partitions, batch_parse(payloads, stamps), splitters)
    return _many_tuples_table(raw, partitions, payloads, stamps, parser_for(source_type), splitters)


def _one_tuple_table(raw: pa.Table, values: pa.Array, partitions: np.ndarray,
                     parsed: ParsedColumns, splitters: int) -> pa.Table:  # fmt: skip
    # Column-wise assembly from arrays: one row per message, as many rows as the input.
    failed = parsed.errors.is_valid()
    fine = pc.invert(failed)
    return pa.Table.from_arrays([
        raw.column("run_id"), pa.array(partitions % splitters, pa.int32()),
        raw.column("partition").cast(pa.int32()), raw.column("offset").cast(pa.int64()),
        pa.array(np.zeros(len(partitions), np.int32), mask=~fine.to_numpy(zero_copy_only=False)),
        parsed.keys,
        pc.if_else(fine, pa.array(parsed.counts), pa.scalar(None, pa.int64())),
        pc.if_else(fine, pa.array(parsed.event_times_ms), pa.scalar(None, pa.int64())),
        parsed.errors,
        pc.if_else(failed, values, pa.scalar(None, pa.binary())),
    ], schema=PARSED_ARROW)  # fmt: skip


def _many_tuples_table(raw: pa.Table, partitions: np.ndarray, payloads: list[bytes | None],
                       stamps: np.ndarray, parse: Parser, splitters: int) -> pa.Table:  # fmt: skip
    found: list[tuple] = []
    run_ids, offsets = (raw.column(name).to_numpy(zero_copy_only=False).tolist()
                        for name in ("run_id", "offset"))  # fmt: skip
    messages = zip(run_ids, partitions.tolist(), offsets, payloads, stamps.tolist(), strict=True)
    for run_id, partition, offset, payload, stamp in messages:
        base = (run_id, splitter_of(partition, splitters), partition, offset)
        if payload is None:
            found.append((*base, None, None, None, None, "null_value", None))
            continue
        try:
            tuples = parse(payload, stamp)
        except ParseError as exc:
            found.append((*base, None, None, None, None, exc.reason, payload))
            continue
        found.extend((*base, index, key, count, event_time, None, None)
                     for index, (key, count, event_time) in enumerate(tuples))  # fmt: skip
    columns = list(zip(*found, strict=True)) or [() for _ in PARSED_ARROW]
    return pa.Table.from_arrays([pa.array(column, field.type) for column, field in
                                 zip(columns, PARSED_ARROW, strict=True)], schema=PARSED_ARROW)  # fmt: skip
