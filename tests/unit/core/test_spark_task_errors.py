"""Spark's report of a failed query, told as the one line of the project's error inside it.

The samples are real texts, trimmed (fewer frames, shorter plans), captured from
``dkg run`` processes: a run over a topic whose first messages were deleted
(``delete_records``), before and after its reader named that case, and one over
a record whose Kafka timestamp pandas cannot hold, before that was checked.
"""

from __future__ import annotations

import logging

import pytest

from core.spark.jvm_output import JvmStderrFilter
from core.spark.task_errors import TaskFailure, hide_reported_failures, task_failure

GONE = (
    "t2[0]: offsets 438 to 875 are no longer in Kafka, whose partition now starts at offset 500: "
    "older messages were deleted (retention.ms, retention.bytes or delete_records) before this "
    "run read them; dkg run reads a topic from offset 0, even with another --warehouse: write the "
    "data to a new --topic and run on that"
)

# str() of the StreamingQueryException that query.awaitTermination() raised (dkg -vv run ...).
OFFSETS_GONE = f"""\
[STREAM_FAILED] Query [id = 77f3ac61-9375-49f8-836f-fc8514e0f478, runId = 7ff65039-4def-4512-acd6-5b20d33ad992] terminated with exception: [FOREACH_BATCH_USER_FUNCTION_ERROR] An error occurred in the user provided function in foreach batch sink. Reason: An exception was raised by the Python Proxy. Return Message: Traceback (most recent call last):
  File "/work/main/.venv/lib/python3.11/site-packages/py4j/clientserver.py", line 644, in _call_proxy
    return_value = getattr(self.pool[obj_id], method)(*params)
  File "/work/main/core/spark/proxies.py", line 56, in write_batch
    writer(df, batch_id)
  File "/work/main/silver/sink.py", line 121, in commit_files
    rows = served.collect()
  File "/work/main/.venv/lib/python3.11/site-packages/pyspark/errors/exceptions/captured.py", line 257, in deco
    raise converted from None
  File "/work/main/silver/kafka_blocks.py", line 57, in read
    batches = list(bronze_batches(partition, self.client, self.run_id))
  File "/work/main/core/kafka/source.py", line 232, in _raise_if_gone
    raise BrokerError(
pyspark.errors.exceptions.captured.PythonException: An exception was thrown from the Python worker:
Traceback (most recent call last):
  File "/work/main/silver/kafka_blocks.py", line 57, in read
    batches = list(bronze_batches(partition, self.client, self.run_id))
  File "/work/main/core/kafka/source.py", line 232, in _raise_if_gone
    raise BrokerError(
core.kafka.admin.BrokerError: {GONE}
 SQLSTATE: 39000 SQLSTATE: XXKST
=== Streaming Query ===
Identifier: silver [id = 77f3ac61-9375-49f8-836f-fc8514e0f478, runId = 7ff65039-4def-4512-acd6-5b20d33ad992]
Current Committed Offsets: {{}}
Current Available Offsets: {{org.apache.spark.sql.execution.datasources.v2.python.PythonMicroBatchStreamWithTriggerAvailableNow@16fa95cf: {{"0": 1314, "1": 686}}}}

Current State: ACTIVE
Thread State: RUNNABLE

Logical Plan:
~WriteToMicroBatchDataSourceV1 ForeachBatchSink, 77f3ac61-9375-49f8-836f-fc8514e0f478, [queryName=silver, checkpointLocation=/tmp/wh/_checkpoints/t2.dynamic_key.w10.s2.ec71cd8b-silver], Append
+- ~FlatMapGroupsInPandasWithState partial(splitter_group#3, splitter#4, kind#5, rows#6L, block#7)#10, [splitter_group#3], [worker_group#11, kind#12, rows#13L, block#14], [StructField(grouping_state,BinaryType,true)], Append, NoTimeout
      +- ~StreamingDataSourceV2ScanRelation[splitter_group#3, splitter#4, kind#5, rows#6L, block#7] dkg_kafka_blocks_c611a302a0217e1c
"""

# The driver JVM's stderr for the same failure (an earlier reader's message), as log4j wrote it.
JVM_STDERR = """\
INFO pipelines.steps: run t2.dynamic_key.w10.s2.f1359425: silver started
26/11/28 10:49:54 ERROR Executor: Exception in task 1.0 in stage 1.0 (TID 3)
org.apache.spark.api.python.PythonException: [PYTHON_EXCEPTION] An exception was thrown from the Python worker: Traceback (most recent call last):
  File "/work/main/silver/kafka_blocks.py", line 57, in read
    batches = list(bronze_batches(partition, self.client, self.run_id))
              ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/work/main/core/kafka/source.py", line 207, in read_range
    consumer.close()
core.kafka.admin.BrokerError: t2[0]: no messages past offset 438 (expected up to 876)
 SQLSTATE: 38000
\tat org.apache.spark.api.python.BasePythonRunner$ReaderIterator.handlePythonException(PythonRunner.scala:665)
\tat java.base/java.lang.Thread.run(Thread.java:840)
26/11/28 10:49:54 ERROR TaskSetManager: [queryId = 2c3c3] [batchId = 0] Task 1 in stage 1.0 failed 1 times; aborting job
26/11/28 10:55:22 ERROR TaskContextImpl: Error in TaskCompletionListener
java.lang.IllegalStateException: Python worker is gone
\tat org.apache.spark.TaskContextImpl.invokeListeners(TaskContextImpl.scala:281)
26/11/28 10:49:54 ERROR MicroBatchExecution: Query silver [id = 2c3c351b-a8e7-4239-8326-abd03ee450ca, runId = 970dc85c-8226-41ef-ad7c-0c36d1c4027f] terminated with error
org.apache.spark.sql.execution.streaming.sources.ForeachBatchUserFuncException: [FOREACH_BATCH_USER_FUNCTION_ERROR] An error occurred in the user provided function in foreach batch sink. Reason: An exception was raised by the Python Proxy. Return Message: Traceback (most recent call last):
  File "/work/main/silver/sink.py", line 121, in commit_files
    rows = served.collect()
pyspark.errors.exceptions.captured.PythonException: An exception was thrown from the Python worker:
Traceback (most recent call last):
  File "/work/main/silver/parsing.py", line 30, in _timestamps_ms
    stamps = pd.to_datetime(column, utc=True).dt.as_unit("ns")
pandas._libs.tslibs.np_datetime.OutOfBoundsDatetime: Out of bounds nanosecond timestamp: 58878-08-22 14:53:22

\tat org.apache.spark.sql.execution.streaming.sources.ForeachBatchSink.callBatchWriter(ForeachBatchSink.scala:60)
26/11/28 10:49:55 ERROR SparkContext: Error initializing SparkContext.
"""

# A bug, not a user mistake: pandas failing in silver's parsing (before readers checked
# Kafka timestamps); the text of the Py4JJavaError a foreachBatch collect() raised.
NOT_A_USER_ERROR = """\
An error occurred while calling o412.collectToPython.
: org.apache.spark.SparkException: Job aborted due to stage failure: Task 0 in stage 2.0 failed 1 times, most recent failure: Lost task 0.0 in stage 2.0 (TID 6) (10.0.0.5 executor driver): org.apache.spark.api.python.PythonException: [PYTHON_EXCEPTION] An exception was thrown from the Python worker: Traceback (most recent call last):
  File "/work/main/silver/routing.py", line 88, in route_blocks_with_state
    rows = parse_raw_events(raw, source_type, splitters)
  File "/work/main/silver/parsing.py", line 30, in _timestamps_ms
    stamps = pd.to_datetime(column, utc=True).dt.as_unit("ns")
pandas._libs.tslibs.np_datetime.OutOfBoundsDatetime: Out of bounds nanosecond timestamp: 58878-08-22 14:53:22
 SQLSTATE: 38000
"""


def test_a_streaming_query_failure_is_the_project_error_s_line():
    failure = task_failure(Exception(OFFSETS_GONE))
    assert isinstance(failure, TaskFailure)
    assert str(failure) == f"the silver query stopped: {GONE}"


def test_the_error_is_found_in_the_exception_a_wrapper_was_raised_from():
    # py4j raises Py4JJavaError from the call; the project's line is in the cause.
    try:
        try:
            raise RuntimeError(OFFSETS_GONE)
        except RuntimeError as exc:
            raise ValueError("An error occurred while calling o87.awaitTermination.") from exc
    except ValueError as wrapper:
        failure = task_failure(wrapper)
    assert failure is not None and GONE in str(failure)


def test_a_task_error_without_a_query_is_its_line_alone():
    text = JVM_STDERR.split("ERROR Executor: ", 1)[1]
    failure = task_failure(Exception(text))
    assert str(failure) == "t2[0]: no messages past offset 438 (expected up to 876)"


@pytest.mark.parametrize("text", [
    NOT_A_USER_ERROR,  # no project error at all: a bug keeps its traceback
    "x\nsilver.parsers.common.ParseError: not_json\n",  # the project's, but not a user error
    "x\ncore.kafka.admin.NoSuchError: y\n",  # no such class
    "x\ncore.nope.BrokerError: y\n",  # no such module
    # Only the first of the project's errors counts: the one that failed the task.
    "silver.parsers.common.ParseError: not_json\ncore.kafka.admin.BrokerError: later\n",
])  # fmt: skip
def test_anything_else_is_left_to_its_traceback(text):
    assert task_failure(Exception(text)) is None


def test_the_jvm_s_records_of_a_failed_task_or_query_are_dropped_with_their_traces():
    line_filter = JvmStderrFilter()
    # Lines as the filter reads them from the JVM's pipe, line ends included.
    kept = [line.rstrip("\n") for line in JVM_STDERR.splitlines(keepends=True)
            if line_filter.keep(line)]  # fmt: skip
    assert kept == [
        "INFO pipelines.steps: run t2.dynamic_key.w10.s2.f1359425: silver started",
        "26/11/28 10:49:55 ERROR SparkContext: Error initializing SparkContext.",
    ]


@pytest.fixture
def py4j():
    logger = logging.getLogger("py4j.clientserver")
    before = list(logger.filters)
    logger.filters[:] = []
    yield logger
    logger.filters[:] = before


@pytest.mark.parametrize(("level", "shown"), [(logging.INFO, []), (logging.DEBUG, ["DEBUG"])])
def test_py4j_s_report_of_a_failed_batch_function_is_debug(py4j, caplog, level, shown):
    hide_reported_failures()
    hide_reported_failures()
    assert len(py4j.filters) == 1
    caplog.set_level(level)
    py4j.error("There was an exception while executing the Python Proxy on the Python Side.")
    py4j.error("An error occurred while trying to connect to the Java server")
    proxy = [r.levelname for r in caplog.records if "Python Proxy" in r.getMessage()]
    assert proxy == shown
    assert [r.levelname for r in caplog.records if "Java server" in r.getMessage()] == ["ERROR"]
