"""``dkg check`` and the job gate over a small Delta warehouse written by delta-rs, checked in Spark.

A user's mistake (no warehouse, no runs, an unknown run id) is one line and exit 2, found
before any Spark session starts.
"""

from __future__ import annotations

import math

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from pyspark.sql import SparkSession

from core.config import QualityConfig
from core.quality import Check, DataQualityError, TableReader, TableRef, run_checks
from core.tables import DeltaRsBackend
from core.warehouse import Warehouse
from gold.expectations import distribution_metrics_suite
from pipelines.checks import quality_gate
from pipelines.cli import main

pytestmark = pytest.mark.spark


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


def test_check_passes_a_good_run_and_names_the_broken_expectation(spark, warehouse, capsys):
    root = str(warehouse.root)
    assert main(["check", "--warehouse", root, "--run-id", "good", "--layer", "bronze"]) == 0
    out = capsys.readouterr().out
    assert "run good" in out and "1 suites, 7 expectations: 7 passed, 0 failed" in out

    assert main(["check", "--warehouse", root, "--layer", "bronze"]) == 1
    out = capsys.readouterr().out
    assert "run bad" in out and "run good" in out
    assert "bronze.raw_events" in out and "FAILED" in out
    assert ("expect_compound_columns_to_be_unique(topic, partition, offset): 2 of 3 rows "
            "unexpected, e.g. [{'topic': 't', 'partition': 0, 'offset': 1}, "
            "{'topic': 't', 'partition': 0, 'offset': 1}]") in out  # fmt: skip


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


def test_gate_raises_naming_suite_expectation_and_column(spark, warehouse):
    backend = DeltaRsBackend()
    quality_gate(spark, warehouse, backend, "good", 3, QualityConfig())("bronze")
    with pytest.raises(DataQualityError) as caught:
        quality_gate(spark, warehouse, backend, "bad", 3, QualityConfig())("bronze")
    message = str(caught.value)
    assert message.startswith("run bad: bronze failed its checks: bronze.raw_events: ")
    assert "expect_compound_columns_to_be_unique(topic, partition, offset)" in message


def _metrics(run_id: str, skew_s: float) -> pa.Table:
    # Built in Arrow, not pandas: pandas would turn the NaN into a null on the way.
    return pa.table({"run_id": [run_id] * 2, "scope": ["cumulative", "window"],
                     "window_start_ms": [-1, 0], "skew_s": [0.5, skew_s], "dist_cost": [1.0, 1.5],
                     "stddev_pct": [1.0, 2.0], "imbalance": [0.1, 0.2],
                     "capacity": [900.0, 950.0], "capacity_vs_key": [1.5, 1.4]})  # fmt: skip


def test_a_nan_metric_in_a_table_counts_as_missing(spark, warehouse):
    """As in pandas, where the suites were written: NaN fails "not null", range checks skip it."""
    backend = DeltaRsBackend()
    path = warehouse.table_uri("gold", "distribution_metrics")
    backend.append(path, pa.concat_tables([_metrics("good", 0.25), _metrics("nan", math.nan)]),
                   "test", 0)  # fmt: skip
    stored = backend.read(path)["skew_s"]
    assert stored.null_count == 0 and pc.any(pc.is_nan(stored)).as_py()  # NaN, not null
    check = Check(distribution_metrics_suite(QualityConfig(), 3),
                  (TableRef("gold", "distribution_metrics"),))  # fmt: skip
    reader = TableReader(spark, warehouse, backend)
    assert run_checks([check], reader, "good")[0].success
    (outcome,) = run_checks([check], reader, "nan")
    assert [str(f) for f in outcome.failures] == [
        "gold.distribution_metrics: expect_column_values_to_not_be_null(skew_s): "
        "1 of 2 rows unexpected, e.g. [None]"]  # fmt: skip
