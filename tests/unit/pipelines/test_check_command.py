"""``dkg check``'s user errors: one line, exit 2, before any Spark session starts.

The checks themselves run in Spark: tests/integration/quality/test_check_command.py.
"""

from __future__ import annotations

import pandas as pd
import pytest
from pyspark.sql import SparkSession

from core.tables import DeltaRsBackend
from core.warehouse import Warehouse
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


def test_user_errors_exit_2(warehouse, tmp_path, capsys):
    # None when the unit tests run alone; a whole-suite run has the integration tests' session.
    session = SparkSession.getActiveSession()
    assert main(["check", "--warehouse", str(tmp_path / "nowhere")]) == 2
    assert "no warehouse" in capsys.readouterr().err
    assert main(["check", "--warehouse", str(warehouse.root), "--run-id", "nope"]) == 2
    err = capsys.readouterr().err
    assert "unknown run id 'nope'" in err and "bad, good" in err
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["check", "--warehouse", str(empty)]) == 2
    assert "no runs" in capsys.readouterr().err
    assert SparkSession.getActiveSession() is session  # every mistake was caught before Spark
