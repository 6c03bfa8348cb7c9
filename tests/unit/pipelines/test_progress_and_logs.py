"""Progress off a terminal (throttled INFO lines), offsets, JVM stderr filter, log levels."""

from __future__ import annotations

import io
import logging

import pytest

from core.logs import configure_logging
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
        for step in range(1, 11):
            clock.now = step * 0.5
            progress.update_to(step * 100, rate=250.0, lag=1000 - step * 100)
    lines = [r.getMessage() for r in caplog.records]
    assert lines == [
        "bronze: 400/1,000 msg, 250 msg/s, lag 600",
        "bronze: 800/1,000 msg, 250 msg/s, lag 200",
        "bronze: 1,000/1,000 msg, 200 msg/s, lag 0",  # final: the average rate
    ]


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
    ('{"version": 4, "index": -1}', 3),
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
