"""A join killed while Spark wrote its first offset starts again (the crash harness found it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bronze.join_data import JoinDataSpec
from core.tables import DeltaRsBackend
from core.warehouse import Warehouse
from pipelines.join_pipeline import JoinRequest, generated_topics, join_run_id, run_join
from silver.join import JoinParams
from tests.join_oracle import assert_run_matches_the_data, expected_join

pytestmark = [pytest.mark.spark, pytest.mark.slow]

SPEC = JoinDataSpec(lefts=500, rate=1_000, partitions=2, seed=11)


def test_a_join_killed_while_writing_its_first_offset_starts_again(spark, join_kafka, tmp_path):
    params = JoinParams(window_ms=2_000, sync_delay_ms=500, partitions=(2, 2))
    request = JoinRequest(SPEC, generated_topics(SPEC), join_kafka, params)
    warehouse, run_id = Warehouse(tmp_path / "lakehouse"), join_run_id(request)
    # What SIGKILL leaves when it lands in the first offset's write: a temporary file
    # and no batch. Spark refused it: "offsets should be empty on batch 0".
    offsets = Path(warehouse.checkpoint(f"{run_id}-join")) / "offsets"
    offsets.mkdir(parents=True)
    (offsets / ".0.a7837657.tmp").write_text("")
    backend = DeltaRsBackend()
    result = run_join(spark, request, warehouse, backend)
    assert result.summary["lefts"] == SPEC.lefts
    assert_run_matches_the_data(warehouse, run_id,
                                expected_join(SPEC, params.window_ms, params.sync_delay_ms))  # fmt: skip
