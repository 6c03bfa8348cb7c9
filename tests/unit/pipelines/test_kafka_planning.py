"""How the Kafka source splits a micro-batch into tasks (no broker needed to plan)."""

from __future__ import annotations

import itertools

import pytest

from core.kafka.client import KafkaClient
from core.kafka.source import KafkaStreamReader, split_range


@pytest.mark.parametrize(("begin", "stop", "chunk"), [(0, 10, 3), (5, 6, 100), (0, 344_000, 125_000),
                                                      (7, 107, 100), (0, 101, 100)])  # fmt: skip
def test_pieces_cover_the_range_once_and_are_balanced(begin, stop, chunk) -> None:
    pieces = split_range(begin, stop, chunk)

    assert pieces[0][0] == begin and pieces[-1][1] == stop
    assert all(a[1] == b[0] for a, b in itertools.pairwise(pieces))  # contiguous
    lengths = [b - a for a, b in pieces]
    assert max(lengths) <= chunk and max(lengths) - min(lengths) <= 1
    assert len(pieces) == -(-(stop - begin) // chunk)


def _reader(min_partitions: int | None) -> KafkaStreamReader:
    options = {"topic": "t"}
    if min_partitions:
        options["minPartitions"] = str(min_partitions)
    return KafkaStreamReader(options, KafkaClient("unused:9092"))


def test_a_hot_partition_is_read_by_several_tasks_of_similar_size() -> None:
    start = {"0": 125_000, "1": 125_000, "2": 125_000, "3": 125_000}
    end = {"0": 469_000, "1": 154_000, "2": 200_000, "3": 176_000}  # 500,000 messages

    tasks = _reader(4).partitions(start, end)

    sizes = [t.end - t.start for t in tasks]
    assert max(sizes) <= 125_000
    assert sorted({t.partition for t in tasks}) == [0, 1, 2, 3]
    for p in "0123":
        mine = sorted((t.start, t.end) for t in tasks if t.partition == int(p))
        assert mine[0][0] == start[p] and mine[-1][1] == end[p]
        assert all(a[1] == b[0] for a, b in itertools.pairwise(mine))
    assert [t.partition for t in tasks if t.partition == 0] == [0, 0, 0]


def test_without_min_partitions_each_partition_is_one_task_and_empty_ones_none() -> None:
    tasks = _reader(None).partitions({"0": 0, "1": 5, "2": 0}, {"0": 10, "1": 5, "2": 1})

    assert [(t.partition, t.start, t.end) for t in tasks] == [(0, 0, 10), (2, 0, 1)]
