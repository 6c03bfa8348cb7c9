"""``dkg check`` and the job gate over a small Delta warehouse written by delta-rs (no Spark)."""

from __future__ import annotations

import pandas as pd
import pytest

from core.config import QualityConfig
from core.quality import DataQualityError
from core.tables import DeltaRsBackend
from core.warehouse import Warehouse
from pipelines.checks import quality_gate
from pipelines.cli import main


def _bronze(run_id: str, offsets: list[int]) -> pd.DataFrame:
    return pd.DataFrame({"run_id": run_id, "topic": "t", "partition": 0, "offset": offsets,
                         "timestamp": pd.Timestamp("2024-01-01", tz="UTC")})  # fmt: skip


@pytest.fixture
def warehouse(tmp_path) -> Warehouse:
    """Two runs in gold.runs; run "bad" landed offset 1 twice."""
    warehouse = Warehouse(tmp_path / "lakehouse")
    backend = DeltaRsBackend()
    bronze = pd.concat([_bronze("good", [0, 1, 2]), _bronze("bad", [0, 1, 1])], ignore_index=True)
    backend.append(warehouse.table_uri("bronze", "raw_events"), bronze, "test", 0)
    runs = pd.DataFrame({"run_id": ["good", "bad"], "workers": [3, 3], "status": "succeeded"})
    backend.append(warehouse.table_uri("gold", "runs"), runs, "test", 0)
    return warehouse


def test_check_passes_a_good_run_and_names_the_broken_expectation(warehouse, capsys):
    root = str(warehouse.root)
    assert main(["check", "--warehouse", root, "--run-id", "good", "--layer", "bronze"]) == 0
    out = capsys.readouterr().out
    assert "run good" in out and "1 suites, 7 expectations: 7 passed, 0 failed" in out

    assert main(["check", "--warehouse", root, "--layer", "bronze"]) == 1
    out = capsys.readouterr().out
    assert "run bad" in out and "run good" in out
    assert "bronze.raw_events" in out and "FAILED" in out
    assert "expect_compound_columns_to_be_unique(topic, partition, offset)" in out


def test_user_errors_exit_2(warehouse, tmp_path, capsys):
    assert main(["check", "--warehouse", str(tmp_path / "nowhere")]) == 2
    assert "no warehouse" in capsys.readouterr().err
    assert main(["check", "--warehouse", str(warehouse.root), "--run-id", "nope"]) == 2
    err = capsys.readouterr().err
    assert "unknown run id 'nope'" in err and "bad, good" in err
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["check", "--warehouse", str(empty)]) == 2
    assert "no runs" in capsys.readouterr().err


def test_gate_raises_naming_suite_expectation_and_column(warehouse):
    backend = DeltaRsBackend()
    quality_gate(warehouse, backend, "good", 3, QualityConfig())("bronze")
    with pytest.raises(DataQualityError) as caught:
        quality_gate(warehouse, backend, "bad", 3, QualityConfig())("bronze")
    message = str(caught.value)
    assert message.startswith("run bad: bronze failed its checks: bronze.raw_events: ")
    assert "expect_compound_columns_to_be_unique(topic, partition, offset)" in message
