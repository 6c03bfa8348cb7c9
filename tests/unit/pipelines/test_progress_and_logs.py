"""Progress off a terminal (throttled INFO lines), offsets, JVM stderr filter, log levels."""

from __future__ import annotations

import io
import logging
from types import SimpleNamespace

import pytest

from core.logs import configure_logging, figures
from core.spark.jvm_output import JvmStderrFilter, start_failure
from pipelines.progress import ProgressReporter, offset_total


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_piped_progress_logs_at_most_once_per_interval_then_a_final_line(caplog):
    clock = _Clock()
    caplog.set_level(logging.INFO, logger="pipelines.progress")
    with ProgressReporter(1000, unit="msg", label="bronze", interval_s=2.0, stream=io.StringIO(),
                          clock=clock) as progress:  # fmt: skip
        for step, done in enumerate((100, 200, 300, 400, 600, 700, 800, 900, 950, 1000), start=1):
            clock.now = step * 0.5
            progress.update_to(done, lag=1000 - done)
    lines = [r.getMessage() for r in caplog.records]
    assert lines == [  # the rate: everything done over the seconds since the start
        "bronze: 400/1,000 msg, 200 msg/s, lag 600",  # 400 in 2 s
        "bronze: 900/1,000 msg, 225 msg/s, lag 100",  # 900 in 4 s
        "bronze: 1,000/1,000 msg, 200 msg/s, lag 0",  # 1,000 in 5 s
    ]


def test_a_resumed_count_rates_only_what_this_work_did(caplog):
    clock = _Clock()
    caplog.set_level(logging.INFO, logger="pipelines.progress")
    with ProgressReporter(None, unit="msg", label="bronze", interval_s=2.0, stream=io.StringIO(),
                          clock=clock) as progress:  # fmt: skip
        progress.begin_at(50_000)  # offsets a checkpoint had reached before
        clock.now = 4.0
        progress.update_to(58_000)
    assert [r.getMessage() for r in caplog.records] == ["bronze: 58,000 msg, 2,000 msg/s"]


def test_short_or_failed_work_logs_nothing(caplog):
    caplog.set_level(logging.INFO, logger="pipelines.progress")
    clock = _Clock()
    with ProgressReporter(10, stream=io.StringIO(), clock=clock) as progress:
        progress.update_to(10)
    with pytest.raises(RuntimeError), ProgressReporter(10, stream=io.StringIO(), clock=clock) as p:
        clock.now = 5.0
        p.update_to(3)
        clock.now = 10.0
        raise RuntimeError("boom")
    assert [r.getMessage() for r in caplog.records] == ["progress: 3/10 it, 1 it/s"]


@pytest.mark.parametrize(("offset", "total"), [
    ('{"0": 120, "1": 118}', 238),
    ('{"events": {"0": 5, "2": 7}}', 12),
    ({"0": 3}, 3),
    (None, None),
    ("not json", None),
    ('{"version": 4, "index": -1}', None),
    ({"version": 4}, None),
    ({"0": 3, "version": 4}, None),
])  # fmt: skip
def test_offset_total(offset, total):
    assert offset_total(offset) == total


def test_jvm_filter_drops_banners_and_harmless_errors_with_their_traces():
    lines = [
        "WARNING: Using incubator modules: jdk.incubator.vector",
        "Using Spark's default log4j profile: org/apache/spark/log4j2-defaults.properties",
        "26/11/23 07:53:49 WARN NativeCodeLoader: Unable to load native-hadoop library",
        "26/11/23 07:54:00 ERROR Utils: uncaught error in thread python-ds",
        "java.lang.StackOverflowError",
        "\tat java.base/java.lang.Thread.run(Thread.java:840)",
        "26/11/23 07:54:01 ERROR TaskSetManager: Task 0 in stage 3.0 failed 1 times",
        "org.apache.spark.SparkException: Python worker exited unexpectedly",
        "\tat org.apache.spark.api.python.BasePythonRunner.read(PythonRunner.scala:100)",
        "26/11/23 07:54:02 WARN WriteToDataSourceV2Exec: Aborting commit for partition 1",
        "java.lang.InterruptedException",
        "\tat java.base/java.lang.Object.wait(Native Method)",
    ]
    line_filter = JvmStderrFilter()
    kept = [line for line in lines if line_filter.keep(line)]
    assert kept == [
        "26/11/23 07:54:00 ERROR Utils: uncaught error in thread python-ds",
        "26/11/23 07:54:01 ERROR TaskSetManager: Task 0 in stage 3.0 failed 1 times",
        "org.apache.spark.SparkException: Python worker exited unexpectedly",
        "\tat org.apache.spark.api.python.BasePythonRunner.read(PythonRunner.scala:100)",
    ]


@pytest.mark.parametrize(("lines", "reason"), [
    (["WARNING: Using incubator modules: jdk.incubator.vector",
      "Using Spark's default log4j profile: org/apache/spark/log4j2-defaults.properties",
      "26/11/25 03:39:52 WARN Utils: Your hostname, vm, resolves to a loopback address",
      'Exception in thread "main" org.apache.spark.SparkException: Master must either be yarn '
      "or start with spark, k8s, or local",
      "\tat org.apache.spark.deploy.SparkSubmit.error(SparkSubmit.scala:1068)"],
     "Master must either be yarn or start with spark, k8s, or local"),
    (["Invalid maximum heap size: -Xmxlots", "Error: Could not create the Java Virtual Machine.",
      "Error: A fatal exception has occurred. Program will exit."],
     "Invalid maximum heap size: -Xmxlots"),
    (["WARNING: Using incubator modules: jdk.incubator.vector", ""], None),
])  # fmt: skip
def test_the_line_that_says_why_the_jvm_did_not_start(lines, reason):
    assert start_failure(line + "\n" for line in lines) == reason


def test_third_party_chatter_is_quiet_unless_verbose():
    try:
        configure_logging(logging.INFO)
        assert not logging.getLogger("great_expectations.data_context").isEnabledFor(logging.INFO)
        assert logging.getLogger("pipelines.progress").isEnabledFor(logging.INFO)
        configure_logging(logging.DEBUG)
        assert logging.getLogger("great_expectations.data_context").isEnabledFor(logging.DEBUG)
        assert not logging.getLogger("py4j.clientserver").isEnabledFor(logging.INFO)
    finally:
        configure_logging(logging.INFO)


def _started(name: str) -> SimpleNamespace:
    return SimpleNamespace(id=f"id-{name}", name=name)


def _batch(name: str, batch: int, packed_rows: int, records: int, spark_rate: float,
           offsets: tuple[dict, dict] | None = None) -> SimpleNamespace:  # fmt: skip
    start, end = offsets or (None, None)
    source = SimpleNamespace(startOffset=start, endOffset=end, latestOffset=end)
    return SimpleNamespace(progress=SimpleNamespace(
        id=f"id-{name}", name=name, batchId=batch, numInputRows=packed_rows,
        processedRowsPerSecond=spark_rate, sources=[source] if offsets else [],
        observedMetrics={"input_rows": {"rows": records}} if records != packed_rows else {}))  # fmt: skip


def test_stream_progress_rates_records_over_each_query_s_own_running_time(caplog):
    from pipelines.stream_progress import StreamProgressListener

    clock = _Clock()
    caplog.set_level(logging.INFO, logger="pipelines.progress")
    listener = StreamProgressListener(interval_s=2.0, clock=clock)
    clock.now = 100.0
    listener.onQueryStarted(_started("bronze"))
    clock.now = 112.5
    # A resumed bronze: offsets 20,000 -> 120,000 in one batch of 4 packed rows.
    listener.onQueryProgress(_batch("bronze", 3, 4, 4, 0.3,
                                    ({"0": 10_000, "1": 10_000}, {"0": 60_000, "1": 60_000})))
    listener.onQueryStarted(_started("silver"))
    clock.now = 132.5
    # 100,000 records packed into 25 rows: Spark's rate counts rows of one batch.
    listener.onQueryProgress(_batch("silver", 0, 25, 100_000, 1.3))
    assert [r.getMessage() for r in caplog.records] == [
        "bronze: 120,000/120,000 msg, 8,000 msg/s, batch 3, lag 0",  # 100,000 in 12.5 s
        "silver: 100,000 msg, 5,000 msg/s, batch 0",  # 100,000 in 20 s
    ]
    assert listener.last["silver"]["rate"] == 5_000


def test_stage_seconds_read_as_one_line():
    seconds = {"bronze": 12.622262525999759, "silver": 18.5500000001, "workers": 7.02,
               "gold": 0.4999999, "all": 1234.56}  # fmt: skip
    assert figures(seconds, "s", decimals=1) == ("bronze 12.6 s, silver 18.6 s, workers 7.0 s, "
                                                 "gold 0.5 s, all 1,234.6 s")  # fmt: skip


def test_figures_group_thousands_and_keep_three_digits():
    values = {"lefts": 200_000, "match_rate": 0.89815, "latency_p99_ms": 1115.1400000000003,
              "latency_p50_ms": 92.6, "missed": 0, "empty": float("nan")}  # fmt: skip
    assert figures(values) == ("lefts 200,000, match_rate 0.898, latency_p99_ms 1,115, "
                               "latency_p50_ms 92.6, missed 0, empty nan")  # fmt: skip
