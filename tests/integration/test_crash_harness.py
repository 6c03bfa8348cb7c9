"""Jobs killed with SIGKILL at random points of their progress end with the gold of a run never killed.

The crash harness (``bench.crash_harness``) runs the job once without kills,
then kills the whole job (driver, JVM, Python workers) again and again, each
kill aimed by the job's progress (a step started, or the micro-batch before
committed, plus a seeded delay into the unit of work that starts there) and
confirmed to have hit it alive in a known step, resumes it to the end and
compares every gold table with the first run's. The grouping job runs every
grouping with its data-quality gates on and is killed in six of the seven runs;
the join is killed in its micro-batches and its gold refresh, one of them twice,
the second time as the resumed job replays it. Beyond that reference, the crashed
runs are checked against the data itself: every Kafka message landed once and
the key counts exact in every grouping's run; every left record joined as the
generator says.
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
from silver.groupings.registry import GROUPING_NAMES
from tests.exact_counts import dataset_counts, gold_counts
from tests.join_oracle import assert_run_matches_the_data, expected_join

pytestmark = pytest.mark.slow

DEADLINE_S = 1200  # the harness's own, for its every wait (a loaded machine: ~3x a quiet one)


def _grouping_matches_the_data(warehouse: Warehouse) -> None:
    backend, messages = DeltaRsBackend(), DEFAULT_SIZE["grouping"]
    bronze = backend.read(warehouse.table_uri("bronze", "raw_events")).to_pandas()
    assert bronze.groupby("run_id").size().to_dict() == dict.fromkeys(bronze["run_id"].unique(),
                                                                      messages)  # fmt: skip
    assert not bronze.duplicated(["run_id", "partition", "offset"]).any()
    counts = gold_counts(warehouse.root)
    assert len(counts) == len(GROUPING_NAMES)
    expected = dataset_counts([DatasetSpec(name="COUNTRY_SKEW_R80", messages=messages, rate=10)])
    assert all(run == expected for run in counts.values())


def _join_matches_the_data(warehouse: Warehouse) -> None:
    backend = DeltaRsBackend()
    (run_id,) = backend.read(warehouse.table_uri("silver", "joined"))["run_id"].unique().tolist()
    conf = load_settings(env={}).settings.join
    spec = data_spec(conf, lefts=DEFAULT_SIZE["join"], partitions=2)
    # Raw rows, not deduplicated: a batch a kill made the job write twice fails here.
    assert_run_matches_the_data(warehouse, run_id,
                                expected_join(spec, conf.window_ms, conf.sync_delay_ms))  # fmt: skip


def _aimed(result) -> set[tuple[str, str]]:
    """(run label, step) of every kill's target."""
    layout = result.layout
    return {(layout.labels[layout.runs[t.point.run]], layout.steps[t.point.step])
            for t in result.plan[: len(result.kills)]}  # fmt: skip


# Grouping: every grouping's run in one job, gates on; six kills in six of the runs, each
# at one of its units (silver's micro-batches, the gates, the gold refresh). Join: six
# kills over its four micro-batches and its gold refresh, one unit aimed at twice (a
# resumed job killed again in it).
@pytest.mark.timeout(DEADLINE_S + 60)
@pytest.mark.parametrize(("pipeline", "kills", "matches_the_data"), [
    ("grouping", 6, _grouping_matches_the_data),
    ("join", 6, _join_matches_the_data),
])  # fmt: skip
def test_random_kills_leave_gold_as_a_run_never_killed(pipeline, kills, matches_the_data,
                                                       tmp_path: Path):  # fmt: skip
    result = run_harness(pipeline, kills, seed=15, workdir=tmp_path, deadline_s=DEADLINE_S)
    shown = report(result)
    assert len(result.kills) == kills, shown  # each confirmed: alive, in a known step, SIGKILLed
    aimed = _aimed(result)
    if pipeline == "grouping":  # every grouping's run in the job, killed runs spread over them
        assert sorted(result.layout.labels.values()) == sorted(GROUPING_NAMES), shown
        assert len({label for label, _ in aimed}) == kills, shown
        assert any(step.endswith(" checks") for _, step in aimed), shown
    else:
        assert {step for _, step in aimed} == {"join", "gold"}, shown
    assert result.ok, shown
    matches_the_data(Warehouse(tmp_path / "crashed"))
