"""A landed bronze file's bytes follow from its rows, however Kafka's polls split them."""

from __future__ import annotations

import pyarrow as pa

from bronze.landing import write_landed
from bronze.schemas import RAW_EVENTS_ARROW
from core.kafka.source import KafkaRange
from core.storage import LOCAL_FILES


def _rows(n: int) -> pa.Table:
    return pa.table({
        "run_id": ["r"] * n, "topic": ["t"] * n, "partition": pa.array([0] * n, pa.int32()),
        "offset": pa.array(range(n), pa.int64()),
        "timestamp": pa.array([1_000_000 * i for i in range(n)], pa.timestamp("us", tz="UTC")),
        "key": [b"k%d" % (i % 7) for i in range(n)], "value": [b'{"n": %d}' % i for i in range(n)],
    }, schema=RAW_EVENTS_ARROW)  # fmt: skip


def test_the_same_rows_in_other_polls_land_the_same_bytes(tmp_path):
    rows, kafka_range = _rows(5000), KafkaRange("t", 0, 0, 5000)
    landed = {}
    for polls in ([5000], [1, 4999], [1700, 1700, 1600]):
        batches, start = [], 0
        for size in polls:
            batches.extend(rows.slice(start, size).to_batches())
            start += size
        folder = tmp_path / f"polls-{len(polls)}"
        chunked = pa.Table.from_batches(batches, schema=RAW_EVENTS_ARROW)  # a chunk a poll
        file = write_landed(kafka_range, chunked, LOCAL_FILES, str(folder), "r")
        assert file is not None and file.rows == 5000
        landed[len(polls)] = ((folder / file.name).read_bytes(), file.size)
    (first, size), *others = landed.values()
    assert size == len(first) and all(other == (first, size) for other in others)


def test_a_range_without_messages_lands_nothing(tmp_path):
    empty = RAW_EVENTS_ARROW.empty_table()
    assert write_landed(KafkaRange("t", 0, 0, 0), empty, LOCAL_FILES, str(tmp_path), "r") is None
    assert not any(tmp_path.iterdir())
