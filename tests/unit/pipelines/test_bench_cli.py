"""`dkg bench --input`: a CSV file of string keys becomes one more workload."""

from __future__ import annotations

import json

import pytest

from pipelines.cli import main
from pipelines.commands.bench import (
    MATRIX,
    MIN_THROUGHPUT,
    TARGET_MESSAGES,
    WORKLOADS,
    Workload,
    _verdict,
)


def test_input_file_adds_a_workload_with_the_speed_verdict_only(tmp_path, capsys):
    path = tmp_path / "words.csv"
    rows = [f"{word},1,{1_767_225_600_000 + i}" for i, word in
            enumerate(["the", "of", "the", "und", "the", "é"] * 300)]  # fmt: skip
    path.write_text("key,count,timestamp_ms\n" + "\n".join(rows) + "\n", encoding="utf-8")
    argv = ["bench", "--messages", "2000", "--grouping", "KEY,DYNAMIC_KEY",
            "--input", str(path), "--input-workers", "7", "--json"]  # fmt: skip
    assert main(argv) == 0
    report = json.loads(capsys.readouterr().out)
    assert len(report) == len(WORKLOADS) + 1
    workload = report[-1]["workload"]
    assert (workload["input"], workload["workers"], workload["messages"]) == (str(path), 7, 1800)
    # 2,000 messages: too few for any target to be judged.
    assert {row["target"] for row in report[-1]["rows"]} == {"n/a"}


def test_a_missing_input_file_is_a_user_error(tmp_path, capsys):
    assert main(["bench", "--messages", "1000", "--input", str(tmp_path / "nope.csv")]) == 2
    assert "does not exist" in capsys.readouterr().err


ZIPF = Workload("ZIPF", 50, 1.4, max_imbalance=1e-3, max_dist_cost=1.2)


@pytest.mark.parametrize(("grouping", "imbalance", "dist_cost", "throughput", "verdict"), [
    ("DYNAMIC_KEY", 5e-4, 1.1, MIN_THROUGHPUT, "ok"),
    ("DYNAMIC_KEY", 2e-3, 1.1, MIN_THROUGHPUT, "MISSED quality"),
    ("DYNAMIC_KEY", 5e-4, 1.3, MIN_THROUGHPUT, "MISSED quality"),
    ("DYNAMIC_KEY", 2e-3, 1.1, MIN_THROUGHPUT - 1, "MISSED speed+quality"),
    ("KEY", 0.3, 1.0, MIN_THROUGHPUT, "ok"),  # only DYNAMIC_KEY is held to the balance target
    ("KEY", 0.3, 1.0, MIN_THROUGHPUT - 1, "MISSED speed"),
])  # fmt: skip
def test_targets_are_judged_at_their_size(grouping, imbalance, dist_cost, throughput, verdict):
    row = {"grouping": grouping, "imbalance": imbalance, "dist_cost": dist_cost,
           "throughput": throughput}  # fmt: skip
    assert _verdict(row, ZIPF, TARGET_MESSAGES) == verdict
    assert _verdict(row, ZIPF, TARGET_MESSAGES - 1) == "n/a"


def test_a_missed_target_fails_the_command(monkeypatch, capsys):
    monkeypatch.setattr("pipelines.commands.bench.TARGET_MESSAGES", 1000)
    monkeypatch.setattr("pipelines.commands.bench.MIN_THROUGHPUT", float("inf"))
    assert main(["bench", "--messages", "1000", "--grouping", "KEY"]) == 1
    assert "target(s) missed" in capsys.readouterr().err


@pytest.mark.parametrize(("splitters", "imbalance", "dist_cost"), [(1, 2e-4, 1.15), (4, 5e-4, 1.25)])
def test_every_matrix_workload_is_held_to_its_splitter_counts_target(splitters, imbalance, dist_cost):
    held = {(w.max_imbalance, w.max_dist_cost) for w in (*MATRIX, *WORKLOADS)
            if w.splitters == splitters}  # fmt: skip
    assert held == {(imbalance, dist_cost)}
    workload = next(w for w in MATRIX if w.splitters == splitters)
    row = {"grouping": "DYNAMIC_KEY", "imbalance": imbalance, "dist_cost": dist_cost,
           "throughput": MIN_THROUGHPUT}  # fmt: skip
    assert _verdict(row, workload, TARGET_MESSAGES) == "ok"
    assert _verdict({**row, "imbalance": imbalance * 1.01}, workload, TARGET_MESSAGES) != "ok"
    assert _verdict({**row, "dist_cost": dist_cost + 0.001}, workload, TARGET_MESSAGES) != "ok"
