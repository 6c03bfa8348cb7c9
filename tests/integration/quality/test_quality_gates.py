"""Data-quality suites on real runs: a finite run passes every check; corruption is named.

The first test runs bronze -> silver -> gold over a Delta table standing in for
a topic (as in test_jobs_finite_run.py) with the gate after each layer, then
corrupts silver; the second runs the whole main job (``dkg run``: local broker,
producer, Spark) with a threshold no real count meets, so its silver gate fails
the run.
"""

from __future__ import annotations

import shutil

import pandas as pd
import pytest

from bronze.datasets.base import DatasetSpec
from core.config import QualityConfig, RunConfig
from core.run_plan import RunPlan
from core.tables import DeltaRsBackend, read_delta_stream
from core.warehouse import Warehouse
from pipelines.checks import quality_gate
from pipelines.cli import main
from pipelines.medallion import run_finite
from tests.integration.topic_tables import write_topic_table

pytestmark = [pytest.mark.spark, pytest.mark.slow]

W = 4


def _topic_table(path, messages: int, partitions: int) -> None:
    spec = DatasetSpec(name="COUNTRY_SKEW_R80", messages=messages, rate=200, seed=7)
    write_topic_table(path, spec, partitions)


def test_finite_run_passes_every_check_and_corrupted_silver_is_named(spark, tmp_path, capsys):
    _topic_table(tmp_path / "topic", 600, partitions=2)
    warehouse = Warehouse(tmp_path / "lakehouse")
    backend = DeltaRsBackend()
    spec = RunPlan(run_id="q-run", source_type="COUNTRY_SKEW_R80", grouping="DYNAMIC_KEY",
                    splitters=2, run=RunConfig(workers=W))  # fmt: skip
    gate = quality_gate(spark, warehouse, backend, spec.run_id, W, QualityConfig())
    gated: list[str] = []

    def after_stage(layer: str) -> None:
        gate(layer)
        gated.append(layer)

    run_finite(spark, read_delta_stream(spark, str(tmp_path / "topic")), spec, warehouse, backend,
               after_stage=after_stage)  # fmt: skip
    assert gated == ["bronze", "silver", "gold"]
    runs = pd.DataFrame({"run_id": [spec.run_id], "workers": [W], "status": ["succeeded"]})
    backend.append(warehouse.table_uri("gold", "runs"), runs, "test-runs", 0)

    root = str(warehouse.root)
    assert main(["check", "--warehouse", root]) == 0
    out = capsys.readouterr().out
    assert "run q-run" in out and "10 suites" in out and " 0 failed\n" in out + "\n"

    # A routed tuple on a worker that does not exist (worker = W).
    routed_path = warehouse.table_uri("silver", "routed")
    routed = backend.read(routed_path).to_pandas()
    bad = routed.iloc[[0]].assign(worker=W, tuple_index=99)
    backend.append(routed_path, bad.astype(routed.dtypes.to_dict()), "corrupt", 0)
    assert main(["check", "--warehouse", root, "--run-id", "q-run"]) == 1
    out = capsys.readouterr().out
    assert "silver.routed" in out and "expect_column_values_to_be_between(worker)" in out
    assert f"[{W}]" in out  # the observed value
    assert "expect_column_pair_values_to_be_equal(silver_count = gold_count)" in out


def test_a_run_whose_tables_are_gone_lands_again_behind_its_kept_checkpoints(spark, tmp_path):
    # As on object storage, where checkpoints stay in a local state folder: the tables
    # go (a bucket emptied, an in-memory S3 server restarted) and the same run starts
    # again. Its queries resumed after the checkpointed offsets and landed nothing, and
    # bronze's gate failed with expect_table_row_count_to_be_between: observed 0.
    spec_data = DatasetSpec(name="COUNTRY_SKEW_R80", messages=600, rate=200, seed=7)
    exact = write_topic_table(tmp_path / "topic", spec_data, 2)
    spec = RunPlan(run_id="gone", source_type="COUNTRY_SKEW_R80", grouping="KEY", splitters=2,
                   run=RunConfig(workers=W))  # fmt: skip
    for started in range(2):
        if started:
            shutil.rmtree(tmp_path / "lakehouse")
        warehouse = Warehouse(tmp_path / "lakehouse", state_dir=tmp_path / "state")
        backend = DeltaRsBackend()
        gate = quality_gate(spark, warehouse, backend, spec.run_id, W, QualityConfig())
        run_finite(spark, read_delta_stream(spark, str(tmp_path / "topic")), spec, warehouse,
                   backend, after_stage=gate)  # fmt: skip
    assert backend.read(warehouse.table_uri("bronze", "raw_events")).num_rows == 600
    counts = backend.read(warehouse.table_uri("gold", "key_counts")).to_pandas()
    assert counts.groupby("key")["count"].sum().to_dict() == dict(exact)


def test_gate_fails_the_main_job_naming_the_expectation(spark, tmp_path, capsys):
    overlay = tmp_path / "strict.yaml"
    overlay.write_text("quality:\n  min_count: 1000000\n")
    warehouse = tmp_path / "lakehouse"
    args = ["run", "--dataset", "COUNTRY_SKEW_R80", "--messages", "300", "--partitions", "2",
            "--workers", str(W), "--grouping", "KEY", "--warehouse", str(warehouse)]  # fmt: skip
    assert main([*args, "--config", str(overlay)]) == 2
    err = capsys.readouterr().err
    assert "silver failed its checks: silver.routed: " in err
    assert "expect_column_values_to_be_between(count)" in err
    runs = DeltaRsBackend().read(Warehouse(warehouse).table_uri("gold", "runs")).to_pandas()
    assert runs["status"].tolist() == ["failed"]
    assert main(["check", "--warehouse", str(warehouse), "--config", str(overlay)]) == 1
    capsys.readouterr()
    # Without the gates the same job finishes; the default thresholds then pass.
    assert main([*args, "--config", str(overlay), "--skip-checks"]) == 0
    assert main(["check", "--warehouse", str(warehouse)]) == 0
    runs = DeltaRsBackend().read(Warehouse(warehouse).table_uri("gold", "runs")).to_pandas()
    assert runs["status"].tolist() == ["succeeded"]
