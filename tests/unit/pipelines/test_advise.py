"""`dkg advise` without a broker: skew measures, the rate estimator, the grid and the rule.

Every expected value is worked out here from the stream's construction (shares
counted by hand, KEY's worker from murmur3 itself, Zipf's closed forms), not
read back from the code under test.
"""

from __future__ import annotations

import json

import mmh3
import numpy as np
import pytest

from bronze.datasets.base import DatasetSpec
from bronze.datasets.registry import make_dataset
from core.config import load_settings
from core.kafka.sample import ChunkPlan, SampledChunk, TopicSample, plan_chunks, read_order
from pipelines.advice.formats import guess_format
from pipelines.advice.grid import GridSettings, simulate_grid
from pipelines.advice.profile import drift, peak_share, skew_profile
from pipelines.advice.sampled import SampledTuples, parse_sample, tuples_per_second
from pipelines.advise import AdviseSettings, advise
from pipelines.cli import main
from pipelines.simulate import SimulationSettings, parse_grouping_choices, simulate
from silver.parsers.registry import UnknownSourceError
from tests.unit.silver.groupings.conftest import zipf_stream

START_MS = 1_767_225_600_000
CHOICES = parse_grouping_choices("all", load_settings(env={}).settings.grouping_params)


def _tuples(keys, times=None, partitions=None, chunks=None) -> SampledTuples:
    keys = np.asarray(keys, dtype=object)
    n = len(keys)
    times = START_MS + np.arange(n) if times is None else np.asarray(times, np.int64)
    zeros = np.zeros(n, np.int32)
    return SampledTuples(keys, np.ones(n, np.int64), np.asarray(times, np.int64),
                         zeros if partitions is None else np.asarray(partitions, np.int32),
                         zeros if chunks is None else np.asarray(chunks, np.int32), n)  # fmt: skip


def _advise(tuples: SampledTuples, workers: int, load: float = 0.8, process_ms: float = 1.0):
    grid = GridSettings((workers,), (load,), process_ms, splitters=1, by_partition=False)
    return advise(tuples, CHOICES, AdviseSettings(workers, load, grid),
                  tuples_per_second(tuples))  # fmt: skip


@pytest.fixture(params=[4, 10, 16], ids=lambda w: f"W{w}")
def workers(request) -> int:
    return int(request.param)


# --- the rule -------------------------------------------------------------------------


def test_uniform_keys_need_no_splitting(workers):
    # 20,000 keys, 10 tuples each, shuffled: KEY's busiest worker is a few % over the
    # mean (hashing), which PARTIAL_KEY would buy back only by nearly doubling dist_cost.
    rng = np.random.default_rng(5)
    keys = rng.permutation(np.repeat([f"user-{i}" for i in range(20_000)], 10))
    advice = _advise(_tuples(keys), workers)
    pick = advice.recommendation.pick
    assert pick.grouping == "KEY"
    assert pick.row.dist_cost == 1.0
    assert "no grouping that splits keys" in advice.recommendation.reason


def _keys_off_worker(worker: int, workers: int, count: int) -> list[str]:
    """``count`` keys that KEY (murmur3 seed 0, mod W) sends anywhere but ``worker``."""
    keys, i = [], 0
    while len(keys) < count:
        key = f"cold-{i}"
        if mmh3.hash(key, 0, signed=False) % workers != worker:
            keys.append(key)
        i += 1
    return keys


def test_a_single_hot_key_is_split_and_key_capacity_is_the_closed_form(workers):
    process_ms = 2.0
    hot_worker = mmh3.hash("hot", 0, signed=False) % workers
    cold = _keys_off_worker(hot_worker, workers, 5_000)
    rng = np.random.default_rng(7)
    keys = rng.permutation(np.array(["hot"] * 50_000 + cold * 10, dtype=object))  # hot: 50 %
    advice = _advise(_tuples(keys), workers, process_ms=process_ms)
    key = next(p for p in advice.points if p.grouping == "KEY")
    # The hot key's worker holds exactly half the tuples and no other key: 1000 / (ms * 0.5).
    assert key.row.capacity == pytest.approx(1000.0 / (process_ms * 0.5))
    assert key.saturation_load == pytest.approx(2.0 / workers)
    pick = advice.recommendation.pick
    assert pick.grouping not in {"KEY", "SHUFFLE"}
    assert pick.saturation_load > 0.8  # keeps up where KEY saturated at 2/W
    assert advice.recommendation.reason.startswith("the top key holds 50.0% of tuples")
    assert advice.profile.top_share == 0.5


@pytest.mark.parametrize(("exponent", "workers"), [(1.4, 50), (2.0, 20)])
def test_zipf_imbalance_of_key_and_partial_key_match_the_closed_forms(exponent, workers):
    keys, times, p = zipf_stream(200_000, exponent=exponent, keys=10_000, seed=1)
    tuples = _tuples(keys, times + START_MS)
    grid = GridSettings((workers,), (0.8,), 1.0, splitters=1, by_partition=False)
    chosen = [c for c in CHOICES if c.name in {"KEY", "PARTIAL_KEY"}]
    points = {p.grouping: p for p in simulate_grid(tuples, chosen, grid, tuples_per_second(tuples))}
    # KEY: the hot key's worker carries p1 (plus its share of the rest); PKG halves p1.
    assert points["KEY"].row.imbalance == pytest.approx(p[0] - 1 / workers, abs=0.03)
    assert points["PARTIAL_KEY"].row.imbalance == pytest.approx(max(0.0, p[0] / 2 - 1 / workers),
                                                                abs=0.02)  # fmt: skip


def test_ties_within_two_percent_go_to_the_lower_dist_cost():
    keys, times, _ = zipf_stream(100_000, exponent=1.4, keys=10_000, seed=3)
    advice = _advise(_tuples(keys, times + START_MS), 10)
    modest = [p for p in advice.recommendation.alternatives
              if p.row.dist_cost <= 2.0 and p.row.capacity_vs_key >= p.row.dist_cost]  # fmt: skip
    top = max(p.row.capacity for p in modest)
    tied = [p for p in modest if p.row.capacity >= 0.98 * top]
    assert advice.recommendation.pick is min(tied, key=lambda p: p.row.dist_cost)


def test_a_point_equals_dkg_simulate_on_the_same_tuples():
    keys, times, _ = zipf_stream(30_000, exponent=1.4, keys=2_000, seed=4)
    tuples = _tuples(keys, times + START_MS)
    rate = tuples_per_second(tuples)
    grid = GridSettings((8,), (0.9,), 1.0, splitters=2, by_partition=False)
    chosen = [c for c in CHOICES if c.name in {"KEY", "DYNAMIC_KEY"}]
    points = simulate_grid(tuples, chosen, grid, rate)
    speed = 0.9 * 8 * 1000.0 / rate  # load x W / (process_ms x rate), by hand
    settings = SimulationSettings(8, 2, 15_000, 60_000, 1.0, speed)
    for point, result in zip(points, simulate(tuples.batches(10_000), chosen, settings), strict=True):
        theirs = result.metrics.cumulative
        for name in ("imbalance", "dist_cost", "capacity", "capacity_vs_key", "p50_ms", "p99_ms"):
            assert getattr(point.row, name) == pytest.approx(getattr(theirs, name), rel=1e-9), name


# --- skew measures --------------------------------------------------------------------


def test_top_shares_and_keys_over_a_workers_share():
    keys = ["a"] * 50 + ["b"] * 30 + ["c"] * 20
    profile = skew_profile(np.array(keys, dtype=object), START_MS + np.arange(100), [2, 3, 4, 5])
    assert profile.top_keys == [("a", 0.5), ("b", 0.3), ("c", 0.2)]
    assert profile.top_share == 0.5
    # more than 1/W: none of 1/2 (a is exactly 1/2), a over 1/3, a and b over 1/4 and 1/5.
    assert profile.keys_over == {2: 0, 3: 1, 4: 2, 5: 2}
    assert profile.distinct_keys == 3


def test_drift_of_a_shifting_hot_set_and_of_a_stationary_one():
    rng = np.random.default_rng(0)
    hot = {0: [f"k{i}" for i in range(10)], 1: [f"m{i}" for i in range(10)],
           2: [f"k{i}" for i in range(5, 15)]}  # fmt: skip
    keys, times = [], []
    for third, names in hot.items():
        # 100 tuples of each hot key, one tuple each of 200 cold keys, within the third.
        block = [n for n in names for _ in range(100)] + [f"cold-{third}-{i}" for i in range(200)]
        keys += list(rng.permutation(block))
        times += list(START_MS + third * 10_000 + np.sort(rng.integers(0, 9_000, len(block))))
    overlap, first, last = drift(np.array(keys, dtype=object), np.array(times))
    # first third's top 10: k0..k9; last third's: k5..k14; shared k5..k9 -> 5 of 15.
    assert overlap == pytest.approx(5 / 15)
    assert first in hot[0] and last in hot[2]

    # Stationary: the same shares in every third (1 up to sampling noise).
    stationary, _, _ = zipf_stream(60_000, exponent=1.4, keys=1_000, seed=9)
    overlap, first, last = drift(stationary, START_MS + np.arange(60_000))
    assert overlap == pytest.approx(1.0, abs=0.05) and first == last == "key-1"


def test_drift_weighs_keys_by_share_and_ignores_a_flat_stream():
    # First third: a 60 %, b 40 %; last third: a 20 %, c 80 %.
    # Hot keys a, b, c: min 0.2 + 0 + 0 over max 0.6 + 0.4 + 0.8 = 1/9.
    keys = np.array(["a"] * 6 + ["b"] * 4 + ["x"] * 10 + ["a"] * 2 + ["c"] * 8, dtype=object)
    times = np.arange(30) * 10  # thirds: [0, 96.7), the x's, [193.3, 290]
    assert drift(keys, START_MS + times) == (pytest.approx(1 / 9), "a", "c")
    # 20,000 keys of one tuple each: no key holds 1 % of a third, no hot set to compare.
    flat = np.array([f"u{i}" for i in range(20_000)], dtype=object)
    assert drift(flat, START_MS + np.arange(20_000))[0] is None


def test_peak_share_finds_a_key_hot_in_one_tenth_only():
    # 10 slices of 1,000 tuples over [0, 10 s): slice 3 is 60 % "burst", the rest is spread
    # over 5,000 keys; over the whole stream "burst" holds 6 %.
    keys = np.array([f"k{i % 5000}" for i in range(10_000)], dtype=object)
    keys[3000:3600] = "burst"
    share, key = peak_share(keys, START_MS + np.arange(10_000))
    assert (share, key) == (pytest.approx(0.6), "burst")
    assert skew_profile(keys, START_MS + np.arange(10_000), [10]).top_share == pytest.approx(0.06)


def test_drift_is_unknown_without_a_time_span():
    assert drift(np.array(["a", "b"], dtype=object), np.array([5, 5])) == (None, None, None)


# --- the rate estimator ---------------------------------------------------------------


def test_tuples_per_second_pools_chunks_per_partition_and_adds_partitions():
    # Partition 0: two chunks of 10 tuples, 10 ms apart, 10 s between the chunks:
    # 18 gaps over 180 ms = 100/s (the 10 s between chunks was not read).
    # Partition 1: one chunk of 5 tuples over 100 ms: 4 gaps / 100 ms = 40/s.
    p0a, p0b = np.arange(10) * 10, 10_000 + np.arange(10) * 10
    p1 = np.arange(5) * 25
    times = START_MS + np.concatenate([p0a, p0b, p1])
    tuples = _tuples(["x"] * 25, times, [0] * 20 + [1] * 5, [0] * 10 + [1] * 10 + [2] * 5)
    assert tuples_per_second(tuples) == pytest.approx(140.0)


def test_tuples_per_second_without_a_span_is_unknown():
    assert tuples_per_second(_tuples(["a", "b"], [START_MS, START_MS])) is None
    assert tuples_per_second(_tuples([])) is None


def _chunk(partition: int, index: int, start: int, times_ms, values=None) -> SampledChunk:
    n = len(times_ms)
    values = values or [json.dumps({"key": "k", "count": 1, "timestamp": START_MS + int(t)}).encode()
                        for t in times_ms]  # fmt: skip
    return SampledChunk(ChunkPlan(partition, index, start, start + n), start + np.arange(n),
                        START_MS + np.asarray(times_ms, np.int64), values)  # fmt: skip


def test_a_topic_rate_is_its_messages_over_its_span_when_the_ends_are_sampled():
    # Partition 0: 1,000 messages, its oldest and newest 10 read; partition 1: 500, its
    # oldest and newest 5. Event times 0 to 14,990 ms: 1,499 gaps in 14.99 s = 100/s,
    # whatever the chunks' own spacing (partition 0 is busier at its start).
    chunks = [_chunk(0, 0, 0, np.arange(10)), _chunk(0, 1, 990, 14_900 + np.arange(10) * 10),
              _chunk(1, 0, 0, 10 + np.arange(5) * 20), _chunk(1, 1, 495, 14_950 + np.arange(5))]
    planned = [c.plan for c in chunks]
    sample = TopicSample("t", {0: (0, 1000), 1: (0, 500)}, chunks, planned)
    tuples = parse_sample(sample, "ZIPF")
    assert tuples.stream_tuples == 1500
    assert tuples_per_second(tuples) == pytest.approx(100.0)
    # Without partition 1's newest chunk the ends are not known: chunks are pooled instead.
    cut = TopicSample("t", sample.watermarks, chunks[:3], planned)
    assert parse_sample(cut, "ZIPF").stream_tuples is None


def test_a_sample_s_counts_stay_exact_beside_refused_messages():
    big = [2**62 + 1, 2**63 - 1]
    values = [json.dumps({"key": "k", "count": c, "timestamp": START_MS}).encode() for c in big]
    chunk = _chunk(0, 0, 0, [0, 0, 0, 0], [*values, b"bad", None])
    sample = TopicSample("t", {0: (0, 4)}, [chunk], [chunk.plan])
    tuples = parse_sample(sample, "ZIPF")
    assert tuples.counts.tolist() == big
    assert tuples.unparsed == {"not_json": 1, "null_value": 1}


@pytest.mark.parametrize("name", ["ZIPF", "TWITTER_TICKER"])
def test_a_sample_parses_into_the_tuples_its_dataset_says_it_holds(name):
    # The generator's own tuples() view is what its messages hold (one tweet: many tickers).
    spec = DatasetSpec(name=name, messages=400, seed=3)
    messages = next(make_dataset(spec).messages(batch_size=400))
    expected = next(make_dataset(spec).tuples(batch_size=100_000))
    half = 200
    chunks = [SampledChunk(ChunkPlan(p, 0, 0, half), np.arange(half),
                           messages.timestamps_ms[p * half:(p + 1) * half],
                           messages.payloads[p * half:(p + 1) * half]) for p in (0, 1)]  # fmt: skip
    sample = TopicSample("t", {0: (0, half), 1: (0, half)}, chunks, [c.plan for c in chunks])
    tuples = parse_sample(sample, name)
    assert sorted(zip(tuples.keys, tuples.event_times_ms.tolist(), strict=True)) == sorted(
        zip(expected.keys, expected.event_times_ms.tolist(), strict=True))
    assert list(tuples.event_times_ms) == sorted(tuples.event_times_ms)  # routing order
    assert tuples.unparsed == {} and tuples.stream_tuples == len(expected)


# --- sampling plan and format ---------------------------------------------------------


def test_chunks_are_each_partitions_share_spread_over_its_offsets():
    plans = plan_chunks({0: (0, 1000), 1: (100, 600), 2: (7, 7)}, max_messages=300, chunks=3)
    # 300 of 1,500 messages: a fifth of each partition, in 3 runs from oldest to newest.
    assert plans == [ChunkPlan(0, 0, 0, 66), ChunkPlan(0, 1, 466, 533), ChunkPlan(0, 2, 933, 1000),
                     ChunkPlan(1, 0, 100, 133), ChunkPlan(1, 1, 333, 366),
                     ChunkPlan(1, 2, 566, 600)]  # fmt: skip
    assert plan_chunks({0: (0, 50), 1: (10, 20)}, 1000, 8) == [ChunkPlan(0, 0, 0, 50),
                                                               ChunkPlan(1, 0, 10, 20)]  # fmt: skip
    assert plan_chunks({0: (5, 5)}, 10, 3) == []
    assert read_order(8)[:3] == [0, 7, 3] and sorted(read_order(8)) == list(range(8))


def _sample(topic: str, values: list[bytes]) -> TopicSample:
    n = len(values)
    chunk = SampledChunk(ChunkPlan(0, 0, 0, n), np.arange(n), START_MS + np.arange(n), values)
    return TopicSample(topic, {0: (0, n)}, [chunk])


def test_the_format_is_told_by_a_generated_topics_name_or_by_its_messages():
    assert guess_format(_sample("zipf-100000-s42", [b"?"])) == "keyed-json"
    assert guess_format(_sample("twitter_ticker-500-s1", [b"?"])) == "tweet-cashtags"
    keyed = [json.dumps({"key": f"k{i}", "count": 1, "timestamp": START_MS + i}).encode()
             for i in range(50)]  # fmt: skip
    assert guess_format(_sample("orders", keyed)) == "keyed-json"
    with pytest.raises(UnknownSourceError, match=r"cannot tell the format of topic 'orders'.*--format"):
        guess_format(_sample("orders", [b"\x00\x01 binary"] * 20))


# --- the command, on a file -----------------------------------------------------------


def _csv(path, keys) -> str:
    path.write_text("key,count,timestamp_ms\n" + "".join(
        f"{k},1,{START_MS + 2 * i}\n" for i, k in enumerate(keys)))  # fmt: skip
    return str(path)


def test_advise_on_a_file_prints_the_pick_and_the_simulate_line(tmp_path, capsys):
    keys = ["hot" if i % 2 else f"k{i % 997}" for i in range(20_000)]
    argv = ["advise", "--input", _csv(tmp_path / "t.csv", keys), "--workers", "8", "--load", "0.8"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "recommendation: " in out and "recommendation: KEY" not in out
    assert "try: dkg simulate --input" in out and "--workers 8 --load 0.8" in out


def test_advise_json_holds_the_pick_and_every_point(tmp_path, capsys):
    keys = [f"k{i % 5000}" for i in range(20_000)]
    argv = ["advise", "--input", _csv(tmp_path / "u.csv", keys), "--workers", "4", "--json"]
    assert main(argv) == 0
    advice = json.loads(capsys.readouterr().out)
    assert advice["recommendation"]["grouping"] == "KEY"
    assert advice["profile"]["top_share"] == pytest.approx(4 / 20_000)
    loads = {0.5, 0.8, 0.95}  # the configured 0.8 among the defaults
    assert {(p["grouping"], p["load"]) for p in advice["grid"]} == {
        (c.label, u) for c in CHOICES for u in loads}
    assert advice["tuples_per_s"] == pytest.approx(500.0)  # one tuple per 2 ms


@pytest.mark.parametrize(("argv", "names"), [
    (["advise", "--topic", "t", "--format", "morse"], ["--format", "morse", "keyed-json"]),
    (["advise", "--topic", "t", "--input", "x.csv"], ["not allowed with"]),
    (["advise"], ["--topic", "--input"]),
    (["advise", "--topic", "t", "--workers", "0"], ["--workers"]),
    (["advise", "--topic", "t", "--max-messages", "0"], ["--max-messages"]),
    (["advise", "--topic", "t", "--grouping", "KEYS"], ["unknown grouping", "KEYS"]),
    (["advise", "--topic", "t", "--bootstrap-servers", "127.0.0.1:1"],
     ["cannot reach Kafka", "127.0.0.1:1"]),
    (["advise", "--input", "missing.csv"], ["missing.csv"]),
])  # fmt: skip
def test_mistakes_are_one_line_errors(capsys, argv, names):
    assert main(argv) == 2
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert "Traceback" not in captured.err + captured.out
    assert len(err.splitlines()) == 1, err
    for name in names:
        assert name in err, err
