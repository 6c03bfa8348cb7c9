"""Jobs killed with SIGKILL at random moments in each step end with the gold of a run never killed.

The crash harness (``bench.crash_harness``) runs the job once without kills,
then kills the whole job (driver, JVM, Python workers) once in each step of a
second run, each kill confirmed to have hit it alive in a known step, resumes it
to the end and compares every gold table with the first run's. Beyond that
reference, the crashed run is checked against the data itself: every Kafka
message landed once and the key counts exact (grouping), every left record
joined as the generator says (join).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.crash_harness import DEFAULT_SIZE, report, run_harness
from bronze.datasets.base import DatasetSpec
from core.config import load_settings
from core.tables import DeltaRsBackend
from core.warehouse import Warehouse
from pipelines.join_pipeline import data_spec
from tests.exact_counts import dataset_counts, gold_counts
from tests.join_oracle import assert_run_matches_the_data, expected_join

pytestmark = pytest.mark.slow

DEADLINE_S = 600  # the harness's own, for its every wait (a loaded machine: ~4x a quiet one)


def _grouping_matches_the_data(warehouse: Warehouse) -> None:
    backend, messages = DeltaRsBackend(), DEFAULT_SIZE["grouping"]
    bronze = backend.read(warehouse.table_uri("bronze", "raw_events")).to_pandas()
    assert len(bronze) == messages
    assert not bronze.duplicated(["partition", "offset"]).any()
    (counts,) = gold_counts(warehouse.root).values()  # one run
    assert counts == dataset_counts([DatasetSpec(name="COUNTRY_SKEW_R80", messages=messages)])


def _join_matches_the_data(warehouse: Warehouse) -> None:
    backend = DeltaRsBackend()
    (run_id,) = backend.read(warehouse.table_uri("silver", "joined"))["run_id"].unique().tolist()
    conf = load_settings(env={}).settings.join
    spec = data_spec(conf, lefts=DEFAULT_SIZE["join"], partitions=2)
    # Raw rows, not deduplicated: a batch a kill made the job write twice fails here.
    assert_run_matches_the_data(warehouse, run_id,
                                expected_join(spec, conf.window_ms, conf.sync_delay_ms))  # fmt: skip


# One kill aimed at each step: silver (landing bronze, routing and workers), gold (gates
# off: the on-demand harness kills in them too); the join and its gold refresh.
@pytest.mark.timeout(DEADLINE_S + 60)
@pytest.mark.parametrize(("pipeline", "kills", "options", "matches_the_data"), [
    ("grouping", 2, ["--skip-checks"], _grouping_matches_the_data),
    ("join", 2, [], _join_matches_the_data),
])  # fmt: skip
def test_random_kills_leave_gold_as_a_run_never_killed(pipeline, kills, options, matches_the_data,
                                                       tmp_path: Path):  # fmt: skip
    result = run_harness(pipeline, kills, seed=15, workdir=tmp_path, extra=options,
                         deadline_s=DEADLINE_S)  # fmt: skip
    shown = report(result)
    assert len(result.kills) == kills, shown  # each confirmed: alive, in a known step, SIGKILLed
    assert len({kill.target for kill in result.kills}) == kills, shown  # one per step
    assert result.ok, shown
    matches_the_data(Warehouse(tmp_path / "crashed"))
