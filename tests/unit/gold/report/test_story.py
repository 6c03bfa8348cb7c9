"""The report's paragraph, against answers worked out by hand from hand-built gold frames."""

from __future__ import annotations

import pytest

from gold.report import build_report_data
from gold.report.story import write_story
from tests.unit.gold.report.skewed_runs import skewed_frames


def _story(frames, run_ids=(), runs=True):
    return write_story(build_report_data(frames["distribution_metrics"], frames["worker_load"],
                                         frames["runs"] if runs else None,
                                         run_ids=run_ids))  # fmt: skip


def _set(frames, run_id, **values):
    """Overwrite the run's cumulative gold values (what a different run would have written)."""
    metrics = frames["distribution_metrics"]
    row = (metrics["run_id"] == run_id) & (metrics["scope"] == "cumulative")
    for column, value in values.items():
        metrics.loc[row, column] = value


def test_key_saturates_and_the_near_tie_goes_to_the_cheaper_merge():
    # KEY's worker 0 is busy 28000/30000, 28500/30000, then 31500/30000 >= 1 of the windows
    # starting at 00:00, 00:01, 00:02: it saturates at 00:02. Its worst window p99 is 41,234 ms.
    # PARTIAL_KEY has the highest capacity (192000 * 1000 / (0.5 * 96000) = 4000/s), but
    # DYNAMIC_KEY's (192000 * 1000 / (0.5 * 97200) = 3950.6/s) is within 2 % of it
    # (>= 3920) for dist_cost 1.04 instead of 2.0, so DYNAMIC_KEY is the one told. It is
    # busy at most 24300/30000 < 1, its worst p99 is 2.0 ms, and gold's capacity_vs_key is
    # 121000/97200 = 1.24. Offered: 0.8 x 2 x 1000 / 0.5 = 3200/s, above KEY's
    # 192000 * 1000 / (0.5 * 121000) = 3173.6/s.
    assert _story(skewed_frames()) == (
        "KEY's worker 0 saturates at 2026-01-01 00:02 UTC (minute 2); its p99 reaches 41.2 s. "
        "DYNAMIC_KEY keeps p99 within 2.00 ms for 4 % more merge work (dist_cost 1.04), with 1.24x "
        "KEY's capacity. Falling behind the offered arrival rate: KEY (capacity 3,174 of 3,200 "
        "tuples/s)."
    )


def test_a_capacity_more_than_two_percent_higher_wins_despite_its_merge_work():
    frames = skewed_frames()
    _set(frames, "run-pkg", capacity=4100.0, capacity_vs_key=4100.0 / 3173.5537)  # 3950.6 < 4018
    assert _story(frames).split(". ")[1] == (
        "PARTIAL_KEY keeps p99 within 2.40 ms for 100 % more merge work (dist_cost 2.00), with 1.29x "
        "KEY's capacity"
    )


def test_without_key_the_best_is_measured_against_the_worst():
    # DYNAMIC_KEY (3950.6/s) is the worst of the two shown; PARTIAL_KEY (4000/s) the best:
    # 4000/3950.6 = 1.0125 of its capacity, for 2.0/1.04 - 1 = 92 % more merge work.
    # DYNAMIC_KEY's busiest worker is busy 24300 * 0.5 * 4 / 60000 = 81 % of each window.
    story = _story(skewed_frames(), run_ids=["run-pkg", "run-dkg"])
    assert story == (
        "DYNAMIC_KEY's busiest worker never saturates (at most 81 % busy); its p99 reaches "
        "2.00 ms. PARTIAL_KEY keeps p99 within 2.40 ms for 92 % more merge work (dist_cost 2.00), "
        "with 1.01x DYNAMIC_KEY's capacity. Every run's capacity is above the arrival rate it "
        "was offered."
    )


@pytest.mark.parametrize(("speed", "told"), [
    (4.0, "at most 81 %"),  # 24300 * 0.5 * 4 / 60000 = 0.81
    (0.01, "at most 0.2 %"),  # 0.002025
    (0.001, "under 0.1 %"),  # 0.0002025
])  # fmt: skip
def test_a_worker_that_keeps_up_is_told_how_busy_it_is(speed, told):
    frames = skewed_frames()
    frames["runs"]["speed"] = speed
    story = _story(frames, run_ids=["run-dkg"])
    assert story.startswith(f"DYNAMIC_KEY's busiest worker never saturates ({told} busy); ")


def test_a_best_run_that_saturates_too_is_told_so():
    # At speed 5 a window lasts 12 s: a worker saturates from 24000 tuples (24000 * 0.5 = 12000
    # ms). KEY's worker 0 (28000) and DYNAMIC_KEY's (24300) both do in the first window.
    frames = skewed_frames()
    frames["runs"]["speed"] = 5.0
    story = _story(frames)
    assert story.startswith("KEY's worker 0 saturates at 2026-01-01 00:00 UTC (minute 0); ")
    assert ("DYNAMIC_KEY also saturates (worker 0 at 2026-01-01 00:00 UTC, minute 0) with p99 "
            "up to 2.00 ms for 4 % more merge work") in story


def test_a_utilisation_of_exactly_one_saturates():
    # 30000 tuples * 0.5 ms * speed 4 = 60000 ms of work in a 60000 ms window.
    frames = skewed_frames()
    load = frames["worker_load"]
    load.loc[(load["run_id"] == "run-key") & (load["worker"] == 0)
             & (load["window_start_ms"] == load["window_start_ms"].min() + 60_000), "tuples"] = 30_000
    assert "worker 0 saturates at 2026-01-01 00:01 UTC (minute 1)" in _story(frames)


def test_without_gold_runs_only_gold_metrics_are_told():
    # No speed or service time: no utilisation, and no offered rate. No grouping either, so
    # the reference is the worst capacity (run-key) and the ratio is of the two capacities:
    # 121000/97200 = 1.24.
    assert _story(skewed_frames(), runs=False) == (
        "run-key's p99 reaches 41.2 s. run-dkg reaches p99 2.00 ms for 4 % more merge work "
        "(dist_cost 1.04), with 1.24x run-key's capacity."
    )


@pytest.mark.parametrize(("p99", "told"), [(0.83, "0.83 ms"), (2.0, "2.00 ms"), (41.4, "41.4 ms"),
                                           (2_500.0, "2.50 s"), (41_234.0, "41.2 s"),
                                           (125_600.0, "2.09 min")])  # fmt: skip
def test_a_single_run_tells_its_own_worst_p99(p99, told):
    frames = skewed_frames()
    metrics = frames["distribution_metrics"]
    # The worst window is the told one; a window without a p99 (NaN) is skipped.
    windows = (metrics["run_id"] == "run-key") & (metrics["scope"] == "window")
    metrics.loc[windows, "p99_ms"] = [0.1, p99, 0.05, float("nan")]
    story = _story(frames, run_ids=["run-key"])
    assert story.startswith("KEY's worker 0 saturates at 2026-01-01 00:02 UTC (minute 2); "
                            f"its p99 reaches {told}. Falling behind")  # fmt: skip


def test_gold_without_capacity_columns_still_tells_the_latency():
    frames = skewed_frames()
    frames["distribution_metrics"] = frames["distribution_metrics"].drop(
        columns=["capacity", "capacity_vs_key"])
    frames["runs"] = frames["runs"].drop(columns=["load"])
    story = _story(frames, run_ids=["run-dkg", "run-key"])
    assert story == "KEY's worker 0 saturates at 2026-01-01 00:02 UTC (minute 2); its p99 reaches 41.2 s."
