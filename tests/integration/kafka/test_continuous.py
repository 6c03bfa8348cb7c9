"""Continuous mode: every stage at once while the producer writes; gold ends exact."""

from __future__ import annotations

import threading
import time
from collections import Counter

import pyarrow.compute as pc
import pytest

from bronze.datasets.base import DatasetSpec
from bronze.datasets.registry import make_dataset
from bronze.producer import produce
from core.config import RunConfig
from core.kafka.admin import topic_exists
from core.kafka.source import KafkaTopic, read_kafka_stream
from core.run_plan import RunPlan
from core.tables import DeltaRsBackend
from core.warehouse import Warehouse
from pipelines.continuous import run_continuous
from tests.exact_counts import dataset_counts
from tests.integration.waiting import join_thread, wait_until

pytestmark = [pytest.mark.spark, pytest.mark.slow]

GOLD_DEADLINE_S = 240
"""The producer takes ~8 s; gold catches up a few refreshes later."""


def _gold_counts(backend, warehouse, run_id) -> Counter:
    path = warehouse.table_uri("gold", "key_counts")
    if backend.version(path) is None:  # asked before the first refresh
        return Counter()
    table = backend.read(path)
    rows = table.filter(pc.equal(table["run_id"], run_id)).to_pylist()
    counts: Counter = Counter()
    for row in rows:
        counts[row["key"]] += row["count"]
    return counts


def test_stages_run_side_by_side_and_gold_ends_exact(spark, kafka, tmp_path):
    spec = DatasetSpec(name="COUNTRY_SKEW_R80", messages=3000, rate=200, seed=5)
    expected = dataset_counts([spec])
    # 400 messages/s of wall time: the queries start while messages still arrive.
    producer = threading.Thread(target=produce, args=(make_dataset(spec), kafka, "live", 2,
                                                      2.0, None, 500))  # fmt: skip
    producer.start()
    warehouse, backend = Warehouse(tmp_path / "lake"), DeltaRsBackend()
    run = RunPlan(run_id="live-run", source_type=spec.name, grouping="DYNAMIC_KEY",
                  splitters=2, run=RunConfig(workers=4))  # fmt: skip
    refreshes = []
    # Gold may never equal the expected counts (an over- or under-count): the run
    # then stops at the deadline and the test fails saying what gold held last.
    deadline = time.monotonic() + GOLD_DEADLINE_S

    def finished() -> bool:
        if time.monotonic() > deadline:
            return True
        return not producer.is_alive() and _gold_counts(backend, warehouse, "live-run") == expected

    wait_until("the producer to create topic live", lambda: topic_exists(kafka, "live"),
               timeout_s=60)  # fmt: skip
    kafka_rows = read_kafka_stream(spark, KafkaTopic(kafka, "live", "earliest", 1000))
    times = run_continuous(spark, kafka_rows, run, warehouse, backend, finished, trigger_s=0.5,
                           gold_every_s=1.0, on_refresh=refreshes.append)  # fmt: skip
    join_thread(producer, timeout_s=60)
    gold = _gold_counts(backend, warehouse, "live-run")
    assert gold == expected, (
        f"waited {GOLD_DEADLINE_S} s for gold.key_counts to equal the {sum(expected.values())} "
        f"produced counts; last saw {sum(gold.values())} over {len(gold)} keys, differing at "
        f"{sorted(k for k in expected.keys() | gold.keys() if gold[k] != expected[k])[:10]}"
    )
    assert len(refreshes) >= 1
    assert [r.finished_at for r in refreshes] == sorted(r.finished_at for r in refreshes)
    assert times.profile["bronze"]["rows"] == 3000
