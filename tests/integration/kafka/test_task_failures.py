"""Kafka failing a run while Spark reads it, as a user sees it: one line, exit code 2, in bounded time.

Each case runs ``dkg run`` as a process of its own and reads its whole stderr,
the driver JVM's included: one line ``dkg run: error: ...`` naming the topic,
partition and offsets and what to do, never a traceback, a py4j frame or a
Java stack. What the broker cannot show is said in docs/operations.md: the
embedded broker (noida-db) takes any SASL PLAIN password, so a *wrong password*
is not refused here; SCRAM fails its handshake instead, which librdkafka
reports as the same authentication error a refused password gets.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import Producer, TopicPartition
from confluent_kafka.admin import AdminClient

from bronze.datasets.base import DatasetSpec
from bronze.datasets.registry import make_dataset
from bronze.producer import produce
from core.kafka.admin import end_offsets, ensure_topic
from core.kafka.broker import LocalBroker
from tests.dkg_process import REPO, dkg, dkg_all, one_error_line
from tests.integration.kafka_clients import local_client
from tests.integration.waiting import wait_until

pytestmark = pytest.mark.slow

SPARK_RUN_S = 240  # a Spark start, the rate sample and a micro-batch, on a loaded 2-core machine
STALL_S = 5  # kafka.read_stall_s here: how long a read task waits for a broker gone silent
# A range split into tasks fails in whichever task reads first: any of its pieces.
GONE = re.compile(r"(?P<topic>\w+)\[0\]: offsets (?P<first>\d+) to (?P<last>\d+) are no longer in "
                  r"Kafka, whose partition now starts at offset (?P<kept>\d+): older messages were "
                  r"deleted \(retention.ms, retention.bytes or delete_records\)")  # fmt: skip


def _produce(bootstrap: str, topic: str, messages: int, seed: int = 1) -> dict[int, int]:
    client = local_client(bootstrap)
    produce(make_dataset(DatasetSpec(name="ZIPF", messages=messages, seed=seed)), client, topic, 2)
    return end_offsets(client, topic)


def _delete_below(bootstrap: str, topic: str, partition: int, offset: int) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    (future,) = admin.delete_records([TopicPartition(topic, partition, offset)]).values()
    assert future.result().low_watermark == offset


def _clean(done: subprocess.CompletedProcess[str]) -> str:
    """The one error line of ``dkg run``; nothing from Spark's or Python's traces anywhere."""
    err = one_error_line(done, "run", progress=True)
    for trace in ("Traceback", "py4j", "at org.apache", "SQLSTATE", "%3|"):
        assert trace not in done.stderr, done.stderr[-4000:]
    return err


def _run(topic: str, bootstrap: str, warehouse: str, *extra: str) -> list[str]:
    return ["run", "--format", "keyed-json", "--topic", topic, "--bootstrap-servers", bootstrap,
            "--warehouse", warehouse, "--skip-checks", *extra]  # fmt: skip


def _bad_timestamps(bootstrap: str, topic: str) -> None:
    """Ten good keyed-JSON messages, then one stamped in microseconds as if milliseconds."""
    ensure_topic(local_client(bootstrap), topic, 1)
    producer = Producer({"bootstrap.servers": bootstrap})
    now_ms = int(time.time() * 1000)
    for stamp in [now_ms] * 10 + [now_ms * 1000]:
        payload = json.dumps({"key": "k", "count": 1, "timestamp": stamp}).encode()
        producer.produce(topic, value=payload, partition=0, timestamp=stamp)
    assert producer.flush(30) == 0


SASL = ["--set", "kafka.security_protocol=SASL_PLAINTEXT", "--set", "kafka.sasl_username=u",
        "--set", "kafka.sasl_password=p", "--set", "kafka.sasl_mechanism=SCRAM-SHA-256"]  # fmt: skip

CASES: dict[str, tuple[str, list[str]]] = {
    "offsets gone": ("gone", ["--speed", "1"]),
    "timestamp past 2262 (task)": ("stamped", ["--speed", "1"]),
    # Without --speed, the run samples the topic for its rate first, on the driver.
    "timestamp past 2262 (rate sample)": ("stamped", []),
    "SCRAM refused": ("gone", SASL),
    "TLS to a plaintext listener": ("gone", ["--set", "kafka.security_protocol=SSL"]),
}  # fmt: skip
"""Case -> topic and options; each case has a warehouse of its own, wh-<n>."""


@pytest.fixture(scope="module")
def prepared(bootstrap: str) -> dict[str, int]:
    """The cases' topics on the session's broker; where partition 0 of "gone" now starts."""
    ends = _produce(bootstrap, "gone", 2000)
    _delete_below(bootstrap, "gone", 0, ends[0] // 2)
    _bad_timestamps(bootstrap, "stamped")
    return {"gone_from": ends[0] // 2}


@pytest.fixture(scope="module")
def seen(prepared, bootstrap, tmp_path_factory
         ) -> tuple[Path, dict[str, subprocess.CompletedProcess[str]]]:  # fmt: skip
    """Every case's finished process, two at a time (each a Spark driver or a 10-s wait)."""
    cwd: Path = tmp_path_factory.mktemp("task-failures")
    argvs = {case: _run(topic, bootstrap, f"wh-{n}", *extra)
             for n, (case, (topic, extra)) in enumerate(CASES.items())}  # fmt: skip
    done = dkg_all(list(argvs.values()), cwd, parallel=2, timeout_s=SPARK_RUN_S)
    return cwd, {case: done[tuple(argv)] for case, argv in argvs.items()}


# Every case in one fixture: its first test waits for all of them.
BATCH_TIMEOUT_S = 3 * SPARK_RUN_S + 60


@pytest.mark.timeout(BATCH_TIMEOUT_S)
def test_offsets_deleted_before_the_run_read_them(seen, prepared):
    err = _clean(seen[1]["offsets gone"])
    assert err.startswith("dkg run: error: the silver query stopped: gone[0]: "), err
    found = GONE.search(err)
    assert found, err
    assert int(found["first"]) < int(found["kept"]) == prepared["gone_from"], err
    assert int(found["first"]) <= int(found["last"]), err
    assert err.endswith("write the data to a new --topic and run on that"), err


@pytest.mark.timeout(BATCH_TIMEOUT_S)
@pytest.mark.parametrize("case", ["timestamp past 2262 (task)", "timestamp past 2262 (rate sample)"])
def test_a_record_the_quarantine_cannot_hold_is_named(seen, case):
    err = _clean(seen[1][case])
    assert "stamped[0] offset 10: its Kafka timestamp " in err, err
    assert "a producer that set microseconds as milliseconds?" in err, err


@pytest.mark.timeout(BATCH_TIMEOUT_S)
@pytest.mark.parametrize(("case", "names"), [
    ("SCRAM refused", ["SASL authentication error", "check kafka.security_protocol, "
                       "kafka.sasl_mechanism, kafka.sasl_username and kafka.sasl_password"]),
    ("TLS to a plaintext listener", ["SSL handshake failed", "PLAINTEXT broker listener?",
                                     "check kafka.security_protocol"]),
])  # fmt: skip
def test_a_refused_connection_says_why(seen, bootstrap, case, names):
    err = _clean(seen[1][case])
    assert err.startswith(f"dkg run: error: cannot list the topics of {bootstrap}: "), err
    for name in names:
        assert name in err, err


@pytest.mark.timeout(BATCH_TIMEOUT_S)
def test_runs_stopped_before_spark_made_no_warehouse(seen):
    early = {"timestamp past 2262 (rate sample)", "SCRAM refused", "TLS to a plaintext listener"}
    made = {p.name for p in seen[0].iterdir()}
    for n, case in enumerate(CASES):
        assert (f"wh-{n}" in made) == (case not in early), (case, made)


@pytest.fixture
def own_broker(tmp_path: Path) -> Iterator[LocalBroker]:
    """A broker of this test alone: it is stopped in the middle of a run."""
    broker = LocalBroker(tmp_path / "kafka")
    broker.start()
    yield broker
    broker.stop()


def _committed(cwd: Path, batch: int) -> bool:
    """Whether the silver query's checkpoint under ``cwd/wh`` has committed ``batch``."""
    return any(cwd.glob(f"wh/_checkpoints/*-silver/commits/{batch}"))


@pytest.mark.timeout(SPARK_RUN_S + STALL_S + 120)
def test_a_broker_lost_while_silver_reads(own_broker, tmp_path):
    bootstrap = own_broker.status().bootstrap
    assert bootstrap is not None
    _produce(bootstrap, "lost", 100_000)
    argv = _run("lost", bootstrap, "wh", "--max-offsets-per-trigger", "2000", "--speed", "1",
                "--set", f"kafka.read_stall_s={STALL_S}")  # fmt: skip
    process = _started(argv, tmp_path)
    try:
        wait_until("the silver query's first micro-batch", lambda: _committed(tmp_path, 0),
                   timeout_s=SPARK_RUN_S, interval_s=0.5)  # fmt: skip
        own_broker.stop()
        stopped = time.monotonic()
        out, err = process.communicate(timeout=STALL_S + 90)
        took = time.monotonic() - stopped
    finally:
        process.kill()
    done = subprocess.CompletedProcess(process.args, process.returncode, out, err)
    line = _clean(done)
    assert "the silver query stopped: lost[" in line, line
    assert "no messages past offset " in line, line
    assert f" for {STALL_S} s (expected up to offset " in line, line
    assert f"Kafka at {bootstrap} does not answer (Connect to " in line, line
    assert "Connection refused); is the broker still running?" in line, line
    assert took < STALL_S + 60, f"{took:.0f} s after the broker stopped"


@pytest.mark.timeout(2 * SPARK_RUN_S + 120)
def test_a_resume_after_its_next_offsets_were_deleted(bootstrap, tmp_path):
    # A continuous run stopped cleanly checkpoints the offsets it read; the messages
    # after them are deleted before it resumes.
    first = _produce(bootstrap, "resumed", 2000)
    argv = _run("resumed", bootstrap, "wh", "--continuous", "--grouping", "KEY")
    process = _started(argv, tmp_path)
    try:
        wait_until("the silver query's first micro-batch", lambda: _committed(tmp_path, 0),
                   timeout_s=SPARK_RUN_S, interval_s=0.5)  # fmt: skip
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=120)
    finally:
        process.kill()
    assert process.returncode == 0, err[-4000:]
    _produce(bootstrap, "resumed", 2000, seed=2)
    ends = end_offsets(local_client(bootstrap), "resumed")
    gone_to = (first[0] + ends[0]) // 2
    _delete_below(bootstrap, "resumed", 0, gone_to)
    line = _clean(dkg(argv, tmp_path, timeout_s=SPARK_RUN_S))
    found = GONE.search(line)
    assert found and found["topic"] == "resumed", line
    assert int(found["first"]) < int(found["kept"]) == gone_to, line


def _started(argv: list[str], cwd: Path) -> subprocess.Popen[str]:
    """``dkg argv`` started in ``cwd``, as :func:`tests.dkg_process.dkg` runs it."""
    environment = {**os.environ, "PYTHONPATH": str(REPO), "PYTHONUNBUFFERED": "1"}
    return subprocess.Popen([sys.executable, "-m", "pipelines.cli", *argv], cwd=cwd,  # noqa: S603
                            env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)  # fmt: skip
