"""``dkg run`` on a topic of your own Kafka, as it is and followed, as the pages show them.

``kafka:9092`` is a broker this module starts (noida-db, loopback) and ``clicks`` a
topic of keyed-JSON messages written there first. The finite runs process what
the topic holds; the ``--continuous`` run, in a folder of its own, follows it
while more messages arrive and stops on SIGTERM once gold has them all (the
signal is sent to this process: the command runs here, with its handler).
"""

from __future__ import annotations

import os
import re
import signal
import threading

import pytest
from deltalake.exceptions import TableNotFoundError

from bronze.datasets.base import DEFAULT_START_MS, DatasetSpec
from bronze.datasets.registry import make_dataset
from bronze.producer import produce
from core.kafka.broker import LocalBroker
from tests.exact_counts import dataset_counts, gold_counts
from tests.integration.documented.shown import (
    DEFAULT_GROUPINGS,
    Scenario,
    read_table,
)
from tests.integration.kafka_clients import local_client
from tests.integration.waiting import join_thread, wait_until

pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.timeout(600)]

ENV = {"DKG_RUN__QUALITY_GATES": "false"}  # `dkg check` below validates the followed run
FIRST = DatasetSpec(name="ZIPF", messages=1500, rate=160, seed=42)
# Arrives while the run follows the topic, after the first messages in event time too.
MORE = DatasetSpec(name="ZIPF", messages=500, rate=160, seed=43, start_ms=DEFAULT_START_MS + 20_000)
FOLLOW_DEADLINE_S = 240

AS_IT_IS = ".venv/bin/dkg run --bootstrap-servers kafka:9092 --topic clicks --format keyed-json"
ONE_GROUPING = f"{AS_IT_IS} --grouping DYNAMIC_KEY"
FOLLOW = f"{ONE_GROUPING} --continuous"
CHECK = ".venv/bin/dkg check"
COMMANDS = (AS_IT_IS, ONE_GROUPING, FOLLOW, CHECK)


@pytest.fixture(scope="module")
def clicks(tmp_path_factory):
    """A broker of its own with the topic ``clicks``: {"bootstrap": ..., "client": ...}."""
    broker = LocalBroker(tmp_path_factory.mktemp("your-kafka"))
    bootstrap = broker.start()
    try:
        client = local_client(bootstrap)
        assert produce(make_dataset(FIRST), client, "clicks", 2) == FIRST.messages
        yield {"bootstrap": bootstrap, "client": client}
    finally:
        broker.stop()


@pytest.fixture(scope="module")
def yours(spark, clicks, tmp_path_factory) -> Scenario:
    scenario = Scenario(tmp_path_factory.mktemp("your-topic"), dict(ENV),
                        {"bootstrap": clicks["bootstrap"]})  # fmt: skip
    scenario.run(AS_IT_IS)
    scenario.run(ONE_GROUPING)
    return scenario


def _total(root) -> dict[str, int]:
    try:
        return {run: sum(counts.values()) for run, counts in gold_counts(root).items()}
    except TableNotFoundError:  # before the first gold refresh
        return {}


def _feed_then_stop(root, client, finished: threading.Event, outcome: dict) -> None:
    """Wait for the first messages in gold, write more, wait for those, then SIGTERM."""
    try:
        wait_until("the followed run's gold to count the first messages", lambda: _total(root),
                   lambda totals: FIRST.messages in totals.values(), timeout_s=FOLLOW_DEADLINE_S)  # fmt: skip
        outcome["more"] = produce(make_dataset(MORE), client, "clicks", None)
        outcome["seen"] = wait_until(
            "the followed run's gold to count the later messages too", lambda: _total(root),
            lambda totals: FIRST.messages + MORE.messages in totals.values(),
            timeout_s=FOLLOW_DEADLINE_S)  # fmt: skip
    except AssertionError as exc:  # stop the run anyway; the test reports what was seen
        outcome["error"] = str(exc)
    finally:
        if not finished.is_set():
            os.kill(os.getpid(), signal.SIGTERM)


@pytest.fixture(scope="module")
def followed(spark, clicks, tmp_path_factory) -> tuple[Scenario, dict]:
    scenario = Scenario(tmp_path_factory.mktemp("follow"), dict(ENV),
                        {"bootstrap": clicks["bootstrap"]})  # fmt: skip
    outcome: dict = {}
    finished = threading.Event()
    feeder = threading.Thread(target=_feed_then_stop, daemon=True,
                              args=(scenario.folder / "lakehouse", clicks["client"], finished,
                                    outcome))  # fmt: skip
    # The command handles SIGTERM while it runs; this handler catches a signal sent
    # just after it returned, which would otherwise end the test process.
    previous = signal.signal(signal.SIGTERM, lambda *_: outcome.setdefault("late_signal", True))
    try:
        feeder.start()
        scenario.run(FOLLOW)
        finished.set()
        join_thread(feeder, timeout_s=FOLLOW_DEADLINE_S * 2 + 60)
    finally:
        signal.signal(signal.SIGTERM, previous)
    scenario.run(CHECK)
    return scenario, outcome


def test_your_topic_as_it_is_through_the_default_groupings(yours):
    done = yours.last(AS_IT_IS)
    assert done.code == 0, done
    root = yours.folder / "lakehouse"
    runs = read_table(root / "gold" / "runs")
    assert sorted(runs["label"]) == DEFAULT_GROUPINGS and set(runs["topic"]) == {"clicks"}
    expected = dataset_counts([FIRST])
    assert all(counts == expected for counts in gold_counts(root).values())
    assert done.out.startswith("keyed-json messages from clicks, W=10")


def test_one_grouping_again_resumes_its_run(yours):
    done = yours.last(ONE_GROUPING)
    assert done.code == 0, done
    root = yours.folder / "lakehouse"
    runs = read_table(root / "gold" / "runs")
    assert len(runs) == len(DEFAULT_GROUPINGS)  # the same DYNAMIC_KEY run, not a new one
    assert all(counts == dataset_counts([FIRST]) for counts in gold_counts(root).values())


def test_the_followed_topic_reaches_gold_until_sigterm(followed):
    scenario, outcome = followed
    done = scenario.last(FOLLOW)
    assert "error" not in outcome, outcome["error"]
    assert done.code == 0, done
    assert outcome["more"] == MORE.messages and "late_signal" not in outcome
    root = scenario.folder / "lakehouse"
    (run,) = read_table(root / "gold" / "runs").to_dict("records")
    assert (run["label"], run["status"]) == ("DYNAMIC_KEY", "stopped")
    assert gold_counts(root) == {run["run_id"]: dataset_counts([FIRST, MORE])}


def test_check_validates_the_followed_run(followed):
    scenario, _ = followed
    done = scenario.last(CHECK)
    assert done.code == 0, done
    assert len(re.findall(r"^run ", done.out, re.M)) == 1
    assert re.search(r"\d+ suites, (\d+) expectations: \1 passed, 0 failed", done.out), done.out
