"""`dkg bench --input`: a CSV file of string keys becomes one more workload."""

from __future__ import annotations

import json

from pipelines.cli import main
from pipelines.commands.bench import WORKLOADS


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
    for row in report[-1]["rows"]:
        assert row["target"] in ("ok", "MISSED speed")


def test_a_missing_input_file_is_a_user_error(tmp_path, capsys):
    assert main(["bench", "--messages", "1000", "--input", str(tmp_path / "nope.csv")]) == 2
    assert "does not exist" in capsys.readouterr().err
