"""How a run's queue model is paced: --speed as given, else the speed that makes --load.

The expected figures are worked by hand from the definitions (load = arrival rate
x service time / W), not from the code under test.
"""

from __future__ import annotations

import pytest

from core.config.models import RunConfig
from pipelines.planning import plan_runs, queue_speed
from pipelines.simulate import GroupingChoice

CHOICES = [GroupingChoice("KEY", "KEY"), GroupingChoice("DYNAMIC_KEY", "DYNAMIC_KEY")]


def test_a_given_speed_is_used_and_its_load_reported():
    # 160 tuples/s of event time x 5 = 800/s arriving; 800/s x 1 ms over 4 workers = 0.2.
    speed, load = queue_speed(RunConfig(workers=4, process_ms=1.0, speed=5.0), 160.0)
    assert speed == 5.0
    assert load == pytest.approx(0.2)


def test_without_a_speed_the_load_sets_it():
    # 80 % of 10 workers at 1 ms = 8,000 tuples/s = 50 x the stream's 160/s.
    speed, load = queue_speed(RunConfig(workers=10, process_ms=1.0, load=0.8), 160.0)
    assert speed == pytest.approx(50.0)
    assert load == 0.8


def test_a_stream_of_unknown_rate_runs_at_its_own_pace():
    assert queue_speed(RunConfig(load=0.8), None) == (1.0, None)
    assert queue_speed(RunConfig(speed=3.0), None) == (3.0, None)


def test_every_grouping_of_a_run_gets_the_same_pace_and_its_own_stable_id():
    run = RunConfig(workers=4, process_ms=2.0, speed=2.0)
    plans = plan_runs(run, "t", "ZIPF", "ZIPF", CHOICES, splitters=2, messages=1000, tuples_per_s=100.0)
    again = plan_runs(run, "t", "ZIPF", "ZIPF", CHOICES, splitters=2, messages=1000, tuples_per_s=100.0)
    assert [p.grouping for p in plans] == ["KEY", "DYNAMIC_KEY"]
    # 100 tuples/s x 2 = 200/s; 200/s x 2 ms over 4 workers = 0.1.
    assert [(p.speed, p.load) for p in plans] == [(2.0, pytest.approx(0.1))] * 2
    assert [p.run_id for p in plans] == [p.run_id for p in again]  # replays land on the same run
    assert len({p.run_id for p in plans}) == 2
    faster = plan_runs(RunConfig(workers=4, process_ms=2.0, speed=4.0), "t", "ZIPF", "ZIPF",
                       CHOICES, splitters=2, messages=1000, tuples_per_s=100.0)  # fmt: skip
    assert not {p.run_id for p in faster} & {p.run_id for p in plans}  # another pace, another run
