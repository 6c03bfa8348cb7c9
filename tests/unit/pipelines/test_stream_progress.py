"""The stage displays fed with synthetic Spark progress events: true totals, true rates."""

from __future__ import annotations

import io
import itertools
import logging
import re
import threading
from types import SimpleNamespace

import pytest

from pipelines.steps import STEP_LINE, Step, job_step, watching_steps
from pipelines.stream_progress import StreamProgressListener


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True

    def frames(self) -> list[str]:
        """What the terminal showed, one redraw each (tqdm redraws after a carriage return)."""
        return [f.strip() for f in re.split(r"[\r\n]", self.getvalue()) if f.strip()]


def _started(name: str) -> SimpleNamespace:
    return SimpleNamespace(id=f"id-{name}", name=name)


def _ended(name: str, exception: str | None = None) -> SimpleNamespace:
    return SimpleNamespace(id=f"id-{name}", exception=exception)


def _batch(name: str, batch: int, start: int, end: int, latest: int | None = None,
           partitions: int = 2) -> SimpleNamespace:  # fmt: skip
    """One micro-batch that read Kafka offsets ``start`` to ``end`` (summed over partitions)."""

    def offsets(total: int | None) -> str | None:
        if total is None:
            return None
        share = [total // partitions + (p < total % partitions) for p in range(partitions)]
        return "{" + ", ".join(f'"{p}": {n}' for p, n in enumerate(share)) + "}"

    source = SimpleNamespace(startOffset=offsets(start), endOffset=offsets(end),
                             latestOffset=offsets(latest))  # fmt: skip
    return SimpleNamespace(progress=SimpleNamespace(
        id=f"id-{name}", name=name, batchId=batch, numInputRows=end - start,
        sources=[source], observedMetrics={}))  # fmt: skip


@pytest.fixture
def display():
    clock, terminal = _Clock(), _Terminal()
    listener = StreamProgressListener(clock=clock, stream=terminal, end_wait_s=1.0)
    yield listener, clock, terminal
    for stage in listener._stages.values():  # a failed test's bars
        stage.reporter.close()


def test_a_single_batch_stage_waits_with_its_elapsed_time_then_ends_at_its_total(display):
    listener, clock, terminal = display
    step = Step("r", "silver", total=20_000)
    listener.step_started(step)
    listener.onQueryStarted(_started("silver"))
    waiting = terminal.frames()
    # No count and no rate before Spark reports: only the stage, its time and its input.
    assert waiting and all(f.startswith("silver: 00:0") for f in waiting)
    assert "20,000 msg to read" in waiting[-1]
    assert not any("%" in f or "msg/s" in f for f in waiting)

    clock.now = 9.7  # the one micro-batch ends with the stage
    listener.onQueryProgress(_batch("silver", 0, 0, 20_000))
    assert "100%" in terminal.frames()[-1] and "20.0k/20.0k" in terminal.frames()[-1]
    assert listener.last["silver"]["done"] == 20_000
    assert listener.last["silver"]["rate"] == pytest.approx(20_000 / 9.7)
    listener.onQueryTerminated(_ended("silver"))

    step.seconds = 9.7
    assert listener.step_done(step, failed=False) == "20,000 msg, 2,062 msg/s"


@pytest.mark.parametrize(("resumed_at", "processed"), [(0, 20_000), (8_000, 12_000)])
def test_a_multi_batch_stage_moves_with_each_batch_and_rates_only_its_own_work(display, resumed_at,
                                                                               processed):  # fmt: skip
    listener, clock, terminal = display
    step = Step("r", "silver", total=20_000)
    listener.step_started(step)
    listener.onQueryStarted(_started("silver"))
    ends = [resumed_at + (20_000 - resumed_at) * i // 4 for i in range(5)]
    for batch, (start, end) in enumerate(itertools.pairwise(ends)):
        clock.now = 2.0 * (batch + 1)
        listener.onQueryProgress(_batch("silver", batch, start, end, latest=20_000))
        assert listener.last["silver"]["done"] == end
        assert listener.last["silver"]["lag"] == 20_000 - end
        assert listener.last["silver"]["rate"] == pytest.approx((end - resumed_at) / clock.now)
        assert f"{100 * end // 20_000:3d}%" in terminal.frames()[-1]
    listener.onQueryTerminated(_ended("silver"))
    step.seconds = 10.0
    assert listener.step_done(step, failed=False) == f"{processed:,} msg, {processed // 10:,} msg/s"


def test_a_continuous_query_follows_the_growing_topic_and_ends_with_its_own_line(display, caplog):
    listener, clock, terminal = display
    caplog.set_level(logging.INFO)
    clock.now = 100.0
    listener.onQueryStarted(_started("silver"))  # no step: a continuous run's query
    batches = [(5_000, 8_000, "5.00k/8.00k"), (12_000, 15_000, "12.0k/15.0k")]
    for batch, (end, latest, shown) in enumerate(batches):
        clock.now += 10.0
        listener.onQueryProgress(_batch("silver", batch, end - 5_000 if batch else 0, end, latest))
        assert shown in terminal.frames()[-1]  # the total is the topic's end, as it grows
    assert listener.last["silver"]["lag"] == 3_000
    clock.now = 130.0
    listener.onQueryTerminated(_ended("silver"))
    results = [r for r in caplog.records if getattr(r, "result", False)]
    assert [r.getMessage() for r in results] == [
        "silver done in 30.0 s: 12,000 msg, 400 msg/s, 3,000 msg left"
    ]
    assert listener.finished == ["silver"]


def test_the_step_waits_for_events_spark_delivers_after_the_query_returned(display):
    listener, clock, _ = display
    step = Step("r", "join", total=38_017)
    listener.step_started(step)
    listener.onQueryStarted(_started("join"))

    def late_events() -> None:
        clock.now = 4.0
        listener.onQueryProgress(_batch("join", 0, 0, 38_017, partitions=8))
        listener.onQueryTerminated(_ended("join"))

    timer = threading.Timer(0.05, late_events)
    timer.start()
    step.seconds = 4.0
    try:
        assert listener.step_done(step, failed=False) == "38,017 msg, 9,504 msg/s"
    finally:
        timer.join()


def test_a_stage_s_done_line_is_its_one_result_line_with_the_step_s_duration(caplog):
    listener = StreamProgressListener(stream=io.StringIO())
    caplog.set_level(logging.INFO)
    with watching_steps(listener):
        with job_step("r", "silver", total=1_000) as step:
            listener.onQueryStarted(_started("silver"))
            listener.onQueryProgress(_batch("silver", 0, 0, 1_000))
            listener.onQueryTerminated(_ended("silver"))
        with job_step("r", "silver checks", result_line=False):
            pass
        with pytest.raises(RuntimeError), job_step("r", "gold"):
            raise RuntimeError("boom")
    lines = [r.getMessage() for r in caplog.records]
    shown = [r.getMessage() for r in caplog.records if getattr(r, "result", False)]
    assert len(shown) == 1  # the checks' verdict is another line's; a failed step has none
    assert shown[0].startswith(f"run r: silver done in {step.seconds:.1f} s: 1,000 msg, ")
    assert "run r: silver checks done in 0.0 s" in lines
    assert "run r: gold started" in lines and not any("gold done" in line for line in lines)
    assert not listener._stages  # every display ended


def test_off_a_terminal_progress_is_a_detail_and_the_end_is_told_once(caplog):
    clock = _Clock()
    listener = StreamProgressListener(clock=clock, stream=io.StringIO(), interval_s=2.0)
    caplog.set_level(logging.INFO)
    step = Step("r", "silver", total=20_000)
    listener.step_started(step)
    listener.onQueryStarted(_started("silver"))
    for batch, end in enumerate((10_000, 20_000)):
        clock.now = 5.0 * (batch + 1)
        listener.onQueryProgress(_batch("silver", batch, end - 10_000, end))
    listener.onQueryTerminated(_ended("silver"))
    step.seconds = 10.0
    assert listener.step_done(step, failed=False) == "20,000 msg, 2,000 msg/s"
    # The last batch's figures are the done line's, not a line of their own with another rate.
    assert [(r.getMessage(), getattr(r, "result", False)) for r in caplog.records
            if r.name == "pipelines.progress"] == [
        ("silver: 10,000/20,000 msg, 2,000 msg/s, batch 0", False)]  # fmt: skip


def test_each_micro_batch_of_a_step_is_a_step_line_the_crash_harness_reads(caplog):
    listener = StreamProgressListener(stream=io.StringIO())
    caplog.set_level(logging.INFO)
    with watching_steps(listener), job_step("r", "silver", total=3_000):
        listener.onQueryStarted(_started("silver"))
        for batch in (4, 5, 6):  # a resumed query's ids go on from its checkpoint
            listener.onQueryProgress(
                _batch("silver", batch, 1_000 * (batch - 4), 1_000 * (batch - 3))
            )
        listener.onQueryTerminated(_ended("silver"))
    listener.onQueryStarted(_started("adhoc"))  # a query outside any step has no step lines
    listener.onQueryProgress(_batch("adhoc", 0, 0, 10))
    lines = [
        f"INFO {r.name}: {r.getMessage()}" for r in caplog.records if r.name == "pipelines.steps"
    ]
    assert [(m["step"], m["event"], m["batch"]) for m in map(STEP_LINE.match, lines)] == [
        ("silver", "started", None), ("silver", "batch 4 committed", "4"),
        ("silver", "batch 5 committed", "5"), ("silver", "batch 6 committed", "6"),
        ("silver", "done", None)]  # fmt: skip
    assert all(
        r.levelno == logging.INFO and not getattr(r, "result", False)
        for r in caplog.records
        if "committed" in r.getMessage()
    )  # details: dkg -v only
