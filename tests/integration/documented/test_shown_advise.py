"""``dkg advise`` as docs/advise.md shows it: a topic of your Kafka, the default run's topic, a file.

``kafka:9092`` is a broker this module starts with the topic ``orders`` (ZIPF,
keyed JSON); the default run's topic ``zipf-100000-s42`` is written to the
embedded broker of the scenario's folder; ``tuples.csv`` holds keys spread thinly
over many, which need no splitting. The answers are known without the code: ZIPF's
hottest key holds a third of the tuples, far more than a worker's share at W=10,
so KEY cannot be the pick; thinly spread keys need no split, so KEY is.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from bronze.datasets.base import DatasetSpec
from bronze.datasets.registry import make_dataset
from bronze.producer import produce
from core.kafka.broker import LocalBroker
from tests.integration.documented.shown import Scenario
from tests.integration.kafka_clients import local_client

pytestmark = pytest.mark.slow

YOURS = ".venv/bin/dkg advise --topic orders --bootstrap-servers kafka:9092 --format keyed-json"
ASKED = (".venv/bin/dkg advise --topic orders --bootstrap-servers kafka:9092 --workers 12 "
         "--load 0.9 --json")  # fmt: skip
DEFAULT_TOPIC = ".venv/bin/dkg advise --topic zipf-100000-s42"
FILE = ".venv/bin/dkg advise --input tuples.csv"
COMMANDS = (YOURS, ASKED, DEFAULT_TOPIC, FILE)


@pytest.fixture(scope="module")
def advised(tmp_path_factory) -> Scenario:
    folder = tmp_path_factory.mktemp("advise")
    rng = np.random.default_rng(5)
    keys = rng.integers(0, 50_000, 20_000)
    (folder / "tuples.csv").write_text("".join(f"k{k},1,{i * 5}\n" for i, k in enumerate(keys)))
    theirs, embedded = LocalBroker(folder / "theirs"), LocalBroker(folder / "kafka")
    bootstrap = theirs.start()
    try:
        produce(make_dataset(DatasetSpec(name="ZIPF", messages=20_000)), local_client(bootstrap),
                "orders", 2)  # fmt: skip
        produce(make_dataset(DatasetSpec(name="ZIPF", messages=100_000)),
                local_client(embedded.start()), "zipf-100000-s42", 4)  # fmt: skip
        scenario = Scenario(folder, {"DKG_KAFKA__EMBEDDED__RUN_DIR": str(folder / "kafka")},
                            {"bootstrap": bootstrap})  # fmt: skip
        for command in COMMANDS:
            scenario.run(command)
    finally:
        theirs.stop()
        embedded.stop()
    return scenario


def _pick(out: str) -> str:
    return next(line for line in out.splitlines() if line.startswith("recommendation:"))


@pytest.mark.parametrize("command", [YOURS, DEFAULT_TOPIC])
def test_a_zipf_topic_needs_its_hot_key_split(advised, command):
    done = advised.last(command)
    assert done.code == 0, done
    assert "recommendation: KEY " not in _pick(done.out)
    assert "format keyed-json" in done.out


def test_the_json_answer_is_for_the_asked_w_and_load(advised):
    done = advised.last(ASKED)
    assert done.code == 0, done
    answer = json.loads(done.out)
    assert answer["command"].startswith("dkg run --format keyed-json --topic orders --grouping ")
    assert "--workers 12 --load 0.9" in answer["command"]


def test_thinly_spread_keys_need_no_split(advised):
    done = advised.last(FILE)
    assert done.code == 0, done
    assert _pick(done.out).startswith("recommendation: KEY at W=10")
