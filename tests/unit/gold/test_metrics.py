"""The metrics of design.md against hand-computed examples."""

from __future__ import annotations

import numpy as np
import pytest

from gold.metrics import ServedTuples, balance_metrics
from silver.queueing import FifoQueueModel, arrival_speed, capacity_per_s, offered_load


def test_balance_hand_example():
    m = balance_metrics(np.array([3, 1, 0, 0]))
    assert m.tuples == 4
    assert m.imbalance == pytest.approx((3 - 1) / 4)
    assert m.skew_s == pytest.approx((3 - 1) / (4 - 1))
    assert m.e_lb == pytest.approx((2 + 0 + 1 + 1) / 4)
    assert m.stddev_pct == pytest.approx(np.std([75, 25, 0, 0]))


@pytest.mark.parametrize(
    ("loads", "imbalance", "skew_s", "e_lb", "stddev_pct"),
    [
        ([5, 5, 5, 5], 0.0, 0.0, 0.0, 0.0),
        ([12, 0, 0], 8 / 12, 1.0, 16 / 12, np.std([100, 0, 0])),
        ([7, 6, 6], (7 - 19 / 3) / 19, (7 - 7) / (19 - 7), (2 / 3 + 1 / 3 + 1 / 3) / 19, np.std([700 / 19, 600 / 19, 600 / 19])),
        ([0, 0], 0.0, 0.0, 0.0, 0.0),
        ([9], 0.0, 0.0, 0.0, 0.0),
    ],
)  # fmt: skip
def test_balance_table(loads, imbalance, skew_s, e_lb, stddev_pct):
    m = balance_metrics(np.array(loads))
    assert (m.imbalance, m.skew_s, m.e_lb, m.stddev_pct) == pytest.approx(
        (imbalance, skew_s, e_lb, stddev_pct)
    )


def test_fifo_queue_hand_examples():
    burst = FifoQueueModel(1, process_ms=1.0)
    assert burst.add(np.zeros(3, dtype=int), np.zeros(3)).tolist() == [1.0, 2.0, 3.0]
    assert burst.makespan_ms == 3.0
    spaced = FifoQueueModel(2, process_ms=1.0)
    assert spaced.add(np.array([0, 0, 1]), np.array([0, 5, 5])).tolist() == [1.0, 1.0, 1.0]
    # A later batch queues behind the work still pending from earlier ones.
    assert burst.add(np.array([0]), np.array([1])).tolist() == [3.0]


def test_fifo_speed_compresses_arrivals():
    model = FifoQueueModel(1, process_ms=1.0, speed=10.0)
    # Arrivals 10 ms apart in event time are 1 ms apart at speed 10: no queueing.
    assert model.add(np.zeros(3, dtype=int), np.array([0, 10, 20])).tolist() == [1.0, 1.0, 1.0]
    slow = FifoQueueModel(1, process_ms=2.0, speed=10.0)
    assert slow.add(np.zeros(3, dtype=int), np.array([0, 10, 20])).tolist() == [2.0, 3.0, 4.0]


def test_fifo_batches_equal_one_shot():
    rng = np.random.default_rng(1)
    workers = rng.integers(0, 4, size=5000)
    times = np.sort(rng.integers(0, 4000, size=5000))
    whole = FifoQueueModel(4, 1.0).add(workers, times)
    model = FifoQueueModel(4, 1.0)
    parts = [model.add(workers[i : i + 333], times[i : i + 333]) for i in range(0, 5000, 333)]
    assert np.allclose(np.concatenate(parts), whole)


def test_dist_cost_and_windows():
    served = ServedTuples(workers=3, worker_window_ms=1000, window_ms=1000, process_ms=1.0,
                          speed=1.0)  # fmt: skip
    keys = np.array(["1", "1", "2", "3", "3", "3"], dtype=object)
    workers = np.array([0, 1, 2, 0, 0, 0])
    times = np.array([0, 10, 20, 1500, 1600, 1700])
    served.add(keys[:3], workers[:3], times[:3])
    served.add(keys[3:], workers[3:], times[3:])
    result = served.result(processing_seconds=2.0)
    total = result.cumulative
    assert total.tuples == 6 and total.distinct_keys == 3
    assert total.dist_cost == pytest.approx(4 / 3)  # pairs (1,0) (1,1) (2,2) (3,0)
    assert total.throughput == pytest.approx(3.0)
    assert [w.window_start_ms for w in result.windows] == [0, 1000]
    # The whole run's row has a real window start, in memory as in gold's table.
    assert (total.scope, total.window_start_ms) == ("cumulative", -1)
    assert result.to_table()["window_start_ms"].to_pylist() == [-1, 0, 1000]
    first, second = result.windows
    assert first.loads == (1, 1, 1) and first.dist_cost == pytest.approx(1.5)
    assert second.loads == (3, 0, 0) and second.dist_cost == 1.0
    assert np.add(first.loads, second.loads).tolist() == list(total.loads)
    assert second.p99_ms == pytest.approx(1.0)
    # The busiest worker holds 4 of 6 tuples: it saturates at 6/4 of one worker's 1000/s.
    assert total.capacity == pytest.approx(1500.0)
    assert second.capacity == pytest.approx(1000.0)


def test_empty_run():
    result = ServedTuples(4, 15_000, 60_000, 1.0, 1.0).result(processing_seconds=0.0)
    assert result.cumulative.tuples == 0 and result.windows == []
    assert result.cumulative.dist_cost == 0.0 and result.cumulative.p99_ms == 0.0
    assert result.cumulative.capacity == 0.0


@pytest.mark.parametrize(("process_ms", "gap_ms"), [(1.0, 1.25), (0.05, 0.06), (2.0, 2.0)])
def test_below_saturation_every_tuple_waits_its_service_time(process_ms, gap_ms):
    # Evenly spaced arrivals no faster than the service: nothing queues.
    model = FifoQueueModel(1, process_ms=process_ms, speed=1.0)
    latencies = model.add(np.zeros(1000, int), np.arange(1000) * gap_ms)
    assert latencies == pytest.approx(np.full(1000, process_ms))


@pytest.mark.parametrize(("process_ms", "gap_ms"), [(1.0, 0.8), (0.05, 0.01), (3.0, 1.0)])
def test_above_saturation_the_wait_grows_linearly(process_ms, gap_ms):
    # Tuple i arrives at i * gap and starts when tuple i - 1 is done, at i * process:
    # its latency is process + i * (process - gap).
    n = 1000
    latencies = FifoQueueModel(1, process_ms).add(np.zeros(n, int), np.arange(n) * gap_ms)
    assert latencies == pytest.approx(process_ms + np.arange(n) * (process_ms - gap_ms))


def test_a_load_sets_the_arrival_rate_it_names():
    # 10 workers of 0.5 ms, 80 % busy: 16,000 tuples/s; a stream of 400 tuples per
    # event-second must run 40 times faster.
    assert arrival_speed(0.8, 10, 0.5, 400.0) == pytest.approx(40.0)
    assert offered_load(40.0, 10, 0.5, 400.0) == pytest.approx(0.8)


@pytest.mark.parametrize("workers", [2, 5])
def test_capacity_is_where_the_busiest_worker_saturates(workers):
    rng = np.random.default_rng(workers)
    routed = rng.choice(workers, 20_000, p=np.r_[0.5, np.full(workers - 1, 0.5 / (workers - 1))])
    loads = np.bincount(routed, minlength=workers)
    process_ms = 0.2
    capacity = capacity_per_s(loads, process_ms)
    assert capacity == pytest.approx(1000 * 20_000 / (process_ms * loads.max()))

    def last_wait(rate_per_s: float) -> float:
        # The tuples, evenly spaced at this rate, each to its worker: the last one's wait.
        times = np.arange(len(routed)) * 1000.0 / rate_per_s
        latencies = FifoQueueModel(workers, process_ms).add(routed, times)
        return float(latencies.max())

    # Just below capacity the busiest worker keeps up: its queue stays a few dozen
    # tuples deep. Above it, its work (busiest x process_ms) outlasts the arrivals
    # (that over 1.1): the last tuple waits for the difference.
    assert last_wait(0.97 * capacity) < 50 * process_ms
    work_ms = loads.max() * process_ms
    assert last_wait(1.1 * capacity) == pytest.approx(work_ms * (1 - 1 / 1.1), rel=0.05)
