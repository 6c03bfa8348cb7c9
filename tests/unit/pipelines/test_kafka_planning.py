"""How the Kafka source splits a micro-batch into tasks (no broker needed to plan)."""

from __future__ import annotations

import itertools

import pytest

from core.kafka.admin import BrokerError
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


def _reader(min_partitions: int | None, max_tasks: int | None = None) -> KafkaStreamReader:
    options = {"topic": "t"}
    if min_partitions:
        options["minPartitions"] = str(min_partitions)
    if max_tasks:
        options["maxTasks"] = str(max_tasks)
    return KafkaStreamReader(options, KafkaClient("unused:9092"))


_START = {"0": 125_000, "1": 125_000, "2": 125_000, "3": 125_000}
_END = {"0": 469_000, "1": 154_000, "2": 200_000, "3": 176_000}  # 499,000 messages, one hot


def _covers_each_partition_once(ranges) -> None:
    assert sorted({r.partition for r in ranges}) == [0, 1, 2, 3]
    for p in "0123":
        mine = sorted((r.start, r.end) for r in ranges if r.partition == int(p))
        assert mine[0][0] == _START[p] and mine[-1][1] == _END[p]
        assert all(a[1] == b[0] for a, b in itertools.pairwise(mine))  # contiguous, no overlap


def test_a_hot_partition_is_read_by_several_tasks_of_similar_size() -> None:
    tasks = _reader(4).partitions(_START, _END)

    assert all(len(t.ranges) == 1 for t in tasks)
    ranges = [t.ranges[0] for t in tasks]
    assert max(r.end - r.start for r in ranges) <= 125_000
    _covers_each_partition_once(ranges)
    assert [r.partition for r in ranges if r.partition == 0] == [0, 0, 0]


@pytest.mark.parametrize(("start", "end", "min_partitions"), [
    (_START, _END, 4),  # one hot partition
    ({"0": 0, "1": 0, "2": 0}, {"0": 3000, "1": 3000, "2": 3000}, 4),  # more partitions than cores
    ({"0": 0, "1": 0, "2": 0}, {"0": 3000, "1": 3000, "2": 3000}, 2),
])  # fmt: skip
def test_packed_into_at_most_max_tasks_of_similar_size(start, end, min_partitions) -> None:
    tasks = _reader(min_partitions, max_tasks=2).partitions(start, end)

    assert len(tasks) == 2
    ranges = [r for t in tasks for r in t.ranges]
    # The very pieces an unpacked plan reads: the same landed files, whatever the packing.
    assert sorted(ranges, key=lambda r: (r.partition, r.start)) == [
        t.ranges[0] for t in _reader(min_partitions).partitions(start, end)]
    for task in tasks:  # each task reads its ranges in partition and offset order
        assert list(task.ranges) == sorted(task.ranges, key=lambda r: (r.partition, r.start))
    sizes = sorted(sum(r.end - r.start for r in t.ranges) for t in tasks)
    largest_piece = max(r.end - r.start for r in ranges)
    assert sizes[-1] - sizes[0] <= largest_piece  # the greedy packing's bound
    if min_partitions == 4:  # pieces of half a task: within a quarter of each other
        assert sizes[-1] <= 1.25 * sizes[0]


def test_one_task_reads_every_piece() -> None:
    (task,) = _reader(4, max_tasks=1).partitions(_START, _END)
    _covers_each_partition_once(task.ranges)


def test_a_max_tasks_below_one_is_refused() -> None:
    with pytest.raises(BrokerError, match="maxTasks must be at least 1, not -1"):
        _reader(None, max_tasks=-1)


def test_fewer_ranges_than_max_tasks_are_a_task_each() -> None:
    tasks = _reader(None, max_tasks=8).partitions({"0": 0, "1": 0}, {"0": 10, "1": 4})

    assert [[(r.partition, r.start, r.end) for r in t.ranges] for t in tasks] == [
        [(0, 0, 10)], [(1, 0, 4)]]


def test_without_min_partitions_each_partition_is_one_task_and_empty_ones_none() -> None:
    tasks = _reader(None).partitions({"0": 0, "1": 5, "2": 0}, {"0": 10, "1": 5, "2": 1})

    assert [[(r.partition, r.start, r.end) for r in t.ranges] for t in tasks] == [
        [(0, 0, 10)], [(2, 0, 1)]]
