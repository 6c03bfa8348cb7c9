"""``dkg run --input FILE``: a CSV file of yours through the whole job, every row counted.

The rows go into a topic named after the file and its content as keyed JSON (on
the embedded broker of the test session), and gold's counts per key must be the
file's own sums of its ``count`` column. The same file again is the same topic
and the same runs: the job says they are complete instead of running them again, and
``--recompute`` runs them afresh, replacing every layer's rows of the run.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from deltalake import DeltaTable

from pipelines.cli import main

pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.timeout(600)]


def test_a_csv_file_goes_through_the_job_and_gold_holds_its_sums(tmp_path, monkeypatch, capsys):
    rng = np.random.default_rng(3)
    keys = rng.choice(["hot", *(f"k{i}" for i in range(200))], 3000,
                      p=[0.4, *([0.6 / 200] * 200)])  # fmt: skip
    counts = rng.integers(1, 5, 3000)
    rows = [f"{k},{c},{1_767_225_600_000 + 20 * i}" for i, (k, c) in enumerate(zip(keys, counts, strict=True))]
    path = tmp_path / "clicks per key.csv"
    path.write_text("key,count,timestamp_ms\n" + "\n".join(rows) + "\n")
    expected: Counter = Counter()
    for key, count in zip(keys.tolist(), counts.tolist(), strict=True):
        expected[key] += count
    monkeypatch.chdir(tmp_path)
    argv = ["run", "--input", str(path), "--grouping", "DYNAMIC_KEY", "--workers", "4",
            "--skip-checks", "--warehouse", str(tmp_path / "wh")]  # fmt: skip

    assert main(argv) == 0
    first = capsys.readouterr().out
    assert first.startswith("3,000 rows of clicks per key.csv from csv-clicks-per-key-")
    gold = DeltaTable(str(tmp_path / "wh" / "gold" / "key_counts")).to_pandas()
    for run_id, rows_of_run in gold.groupby("run_id"):
        assert rows_of_run.groupby("key")["count"].sum().to_dict() == dict(expected), run_id
    assert main(argv) == 0
    again = capsys.readouterr().out
    assert "already complete" in again and "--recompute" in again
    # --recompute runs it afresh: every layer rewritten, nothing doubled, the same results.
    bronze = tmp_path / "wh" / "bronze" / "raw_events"
    before = DeltaTable(str(bronze)).version()
    assert main([*argv, "--recompute"]) == 0
    recomputed = capsys.readouterr().out
    assert "already complete" not in recomputed
    assert _table_of(recomputed) == _table_of(first), recomputed
    assert DeltaTable(str(bronze)).version() > before
    assert len(DeltaTable(str(bronze)).to_pandas()) == 3000
    gold = DeltaTable(str(tmp_path / "wh" / "gold" / "key_counts")).to_pandas()
    assert gold.groupby("key")["count"].sum().to_dict() == dict(expected)
    runs = DeltaTable(str(tmp_path / "wh" / "gold" / "runs")).to_pandas()
    assert runs["status"].tolist() == ["succeeded"]


def _table_of(output: str) -> list[str]:
    """The printed comparison's rows: from its header to its legend."""
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("grouping"))
    end = next(i for i, line in enumerate(lines) if line.startswith("p50, p99:"))
    assert end > start + 2, output  # a header, a rule and the rows
    return lines[start:end]
