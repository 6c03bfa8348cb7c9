"""``dkg join`` as the pages show it: generated topics, a stalled partition, topics of your own.

The three joins run in one folder, so the page's query of ``gold.join_stats``
sees all three. Each join's pairs are compared with the generator's ground truth
(its ``matches``), read from gold with delta-rs. ``kafka:9092`` is a broker this
module starts, holding ``clicks`` and ``conversions`` as the generator wrote them.
"""

from __future__ import annotations

import pytest

from bronze.join_data.generator import generate
from bronze.join_data.producer import produce_phase
from core.config import load_settings
from core.kafka.broker import LocalBroker
from pipelines.join_pipeline import data_spec, generated_topics
from tests.integration.documented.shown import Scenario, read_table, text_rows
from tests.integration.kafka_clients import local_client

pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.timeout(600)]

LEFTS = 2000
ENV = {"DKG_JOIN__LEFTS": str(LEFTS)}
JOIN_SETTINGS = load_settings(env={}).settings.join
DEFAULT = data_spec(JOIN_SETTINGS, lefts=LEFTS)
STALLED = data_spec(JOIN_SETTINGS, lefts=50_000, stall_partition=1)
YOURS = data_spec(JOIN_SETTINGS, lefts=1000, partitions=2, seed=7)

JOIN = ".venv/bin/dkg join"
STALL = ".venv/bin/dkg join --lefts 50000 --stall-partition 1"
YOUR_TOPICS = ".venv/bin/dkg join --bootstrap-servers kafka:9092 --topics clicks,conversions"
STATS = ".venv/bin/dkg sql \"SELECT * FROM gold.join_stats WHERE scope = 'cumulative'\""
COMMANDS = (JOIN, STALL, YOUR_TOPICS, STATS)


@pytest.fixture(scope="module")
def joins(spark, tmp_path_factory) -> Scenario:
    folder = tmp_path_factory.mktemp("join")
    broker = LocalBroker(folder / "your-kafka")
    bootstrap = broker.start()
    try:
        produce_phase(generate(YOURS).records, local_client(bootstrap), ("clicks", "conversions"),
                      YOURS.partitions)  # fmt: skip
        scenario = Scenario(folder, {**ENV, "DKG_KAFKA__EMBEDDED__RUN_DIR": str(folder / "kafka")},
                            {"bootstrap": bootstrap})  # fmt: skip
        for command in COMMANDS:
            scenario.run(command)
    finally:
        broker.stop()
    return scenario


def _cumulative(scenario: Scenario, left_topic: str) -> dict:
    stats = read_table(scenario.folder / "lakehouse" / "gold" / "join_stats")
    rows = stats[(stats["scope"] == "cumulative")
                 & stats["run_id"].str.startswith(f"join.{left_topic}.")]  # fmt: skip
    assert len(rows) == 1, stats[["run_id", "scope"]]
    return rows.iloc[0].to_dict()


@pytest.mark.parametrize(("command", "spec"), [(JOIN, DEFAULT), (STALL, STALLED)],
                         ids=["default", "stalled"])  # fmt: skip
def test_a_generated_join_finds_every_pair(joins, command, spec):
    done = joins.last(command)
    assert done.code == 0, done
    row = _cumulative(joins, generated_topics(spec)[0])
    assert (row["lefts"], row["matched"]) == (spec.lefts, len(generate(spec).matches))
    assert row["unmatched"] == spec.lefts - row["matched"]
    shown = dict(line.split() for line in done.out.splitlines()[1:] if line.startswith("  "))
    assert (shown["missed"], shown["false_unmatched"], shown["wrong_pairs"]) == ("0", "0", "0")


def test_your_topics_are_joined_as_they_are(joins):
    done = joins.last(YOUR_TOPICS)
    assert done.code == 0, done
    row = _cumulative(joins, "clicks")
    assert (row["lefts"], row["matched"]) == (YOURS.lefts, len(generate(YOURS).matches))


def test_sql_shows_each_joins_cumulative_statistics(joins):
    done = joins.last(STATS)
    assert done.code == 0, done
    rows = text_rows(done.out)
    assert sorted(int(r["lefts"]) for r in rows) == sorted(
        [YOURS.lefts, DEFAULT.lefts, STALLED.lefts]
    )
    assert {r["scope"] for r in rows} == {"cumulative"}
