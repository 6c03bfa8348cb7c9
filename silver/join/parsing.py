"""Join messages parsed where they are read: Kafka values -> the join's input rows.

The Kafka reader task parses the JSON values itself (Arrow's JSON reader, one
C++ pass per batch), so the rows never cross Spark one by one. Values that
the line reader cannot take as they are (a newline or nothing in a value, a
field of another type, text that is not JSON) send their batch through a
per-value parse with the same result: a field of the wrong type reads as
missing, as Spark's ``from_json`` has it, and a row without a valid
``created_ms``, or without an ``id`` that is no heartbeat, carries its error.
"""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pa_json

from silver.join.schemas import PARSED_ARROW, VALUE_ARROW

__all__ = ["NO_CREATED_MS", "NO_ID", "parse_join_messages", "parse_values"]

NO_CREATED_MS = "not a join record: no valid created_ms"
NO_ID = "record without id"
_LONG = range(-(1 << 63), 1 << 63)
_READ = pa_json.ReadOptions(use_threads=False, block_size=1 << 30)
_PARSE = pa_json.ParseOptions(explicit_schema=VALUE_ARROW, unexpected_field_behavior="ignore")


def _one_per_line(values: pa.Array) -> bool:
    if values.null_count or not len(values):
        return False
    lengths = pc.binary_length(values)
    return pc.min(lengths).as_py() > 0 and not pc.any(pc.match_substring(values, "\n")).as_py()


def _field(value: object, name: str) -> object:
    found = value.get(name) if isinstance(value, dict) else None
    if name == "id":  # Spark keeps a non-string id as its JSON text
        return found if found is None or isinstance(found, str) else json.dumps(found)
    if name == "created_ms":
        return found if type(found) is int and found in _LONG else None
    return found if isinstance(found, bool) else None


def _parse_each(values: pa.Array) -> pa.Table:
    decoded = []
    for value in values.to_pylist():
        try:
            decoded.append(json.loads(value) if value else None)
        except ValueError:  # not JSON, or not UTF-8
            decoded.append(None)
    return pa.table({name: pa.array([_field(v, name) for v in decoded], field.type)
                     for name, field in zip(VALUE_ARROW.names, VALUE_ARROW, strict=True)})  # fmt: skip


def parse_values(values: pa.Array) -> pa.Table:
    """Kafka message values -> ``id, created_ms, heartbeat`` (:data:`VALUE_ARROW`), row for row."""
    if _one_per_line(values):
        lines = pc.binary_join(pa.ListArray.from_arrays(pa.array([0, len(values)], pa.int32()),
                                                        values), b"\n")[0].as_buffer()  # fmt: skip
        try:
            table = pa_json.read_json(pa.BufferReader(lines), _READ, _PARSE)
        except pa.ArrowInvalid:  # a value of another shape: each on its own below
            table = None
        if table is not None and table.num_rows == len(values):
            return table.select(VALUE_ARROW.names).combine_chunks()
    return _parse_each(values)


def parse_join_messages(kafka: pa.RecordBatch, side: int) -> pa.Table:
    """Kafka rows of one topic -> their parsed rows (:data:`PARSED_ARROW`)."""
    fields = parse_values(kafka.column("value"))
    ids, created = fields.column("id"), fields.column("created_ms")
    heartbeat = pc.fill_null(fields.column("heartbeat"), False)
    no_id = pc.and_(pc.is_null(ids), pc.invert(heartbeat))
    none = pa.scalar(None, pa.string())
    error = pc.if_else(pc.is_null(created), NO_CREATED_MS, pc.if_else(no_id, NO_ID, none))
    return pa.table([pa.repeat(pa.scalar(side, pa.int32()), kafka.num_rows), kafka.column("partition"),
                     kafka.column("offset"), ids, created, error], schema=PARSED_ARROW)  # fmt: skip
