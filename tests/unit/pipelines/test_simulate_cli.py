"""`dkg simulate` as a user runs it: table, JSON, CSV input, splitters, clear errors."""

from __future__ import annotations

import json

import numpy as np
import pytest

from bronze.datasets.base import TupleBatch
from pipelines.cli import main
from pipelines.simulate import GroupingChoice, SimulationSettings, simulate
from silver.groupings.partial_key import PartialKeyGrouping

TABLE_KEYS = {"grouping", "imbalance", "stddev_pct", "skew_s", "e_lb", "dist_cost", "p99_ms",
              "throughput"}  # fmt: skip


def test_json_lists_every_grouping_with_the_table_columns(capsys):
    assert main(["simulate", "--messages", "3000", "--workers", "5", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["grouping"] for r in rows] == ["SHUFFLE", "KEY", "PARTIAL_KEY", "DYNAMIC_KEY",
                                             "CONSISTENT_HASH", "SMALOPS", "W_CHOICES"]  # fmt: skip
    for row in rows:
        assert TABLE_KEYS <= row.keys()
        assert row["tuples"] == 3000
        # The whole run's row, as gold.distribution_metrics holds it.
        assert (row["scope"], row["window_start_ms"]) == ("cumulative", -1)
    by_name = {r["grouping"]: r for r in rows}
    assert by_name["KEY"]["dist_cost"] == 1.0
    assert by_name["SHUFFLE"]["imbalance"] == 0.0
    assert by_name["KEY"]["imbalance"] > by_name["PARTIAL_KEY"]["imbalance"]


def test_table_output_and_grouping_parameters(capsys):
    argv = ["simulate", "--messages", "2000", "--workers", "4", "--dataset", "country_skew_r80",
            "--grouping", "KEY,DYNAMIC_KEY(mode=seed),DYNAMIC_KEY"]  # fmt: skip
    assert main(argv) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[1].split() == ["grouping", "p50", "p99", "capacity", "vs", "KEY", "dist_cost",
                                "imbalance"]  # fmt: skip
    assert [line.split()[0] for line in lines[3:6]] == ["KEY", "DYNAMIC_KEY(mode=seed)",
                                                        "DYNAMIC_KEY"]  # fmt: skip
    # Each column explained, under the load it was measured at.
    assert [line.split(":")[0] for line in lines[6:9]] == ["p50, p99", "capacity", "dist_cost"]
    assert "80% of the 4 workers' 4,000/s" in lines[6]


def test_same_seed_same_metrics(capsys):
    argv = ["simulate", "--messages", "2000", "--grouping", "PARTIAL_KEY,W_CHOICES", "--json"]
    main(argv)
    first = json.loads(capsys.readouterr().out)
    main(argv)
    second = json.loads(capsys.readouterr().out)
    strip = [{k: v for k, v in r.items() if k != "throughput"} for r in first]
    assert strip == [{k: v for k, v in r.items() if k != "throughput"} for r in second]


def test_csv_input(tmp_path, capsys):
    path = tmp_path / "events.csv"
    path.write_text("key,count,timestamp_ms\n" + "".join(f"k{i % 3},1,{i}\n" for i in range(60)))
    assert main(["simulate", "--input", str(path), "--grouping", "KEY", "--workers", "2",
                 "--json"]) == 0  # fmt: skip
    assert json.loads(capsys.readouterr().out)[0]["tuples"] == 60


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--dataset", "NOPE"], "NOPE"),
        (["--grouping", "KEYS"], "unknown grouping"),
        (["--grouping", "DYNAMIC_KEY(mode=turbo)"], "mode"),
        (["--set", "DYNAMIC_KEY.headrom=1"], "headrom"),
        (["--set", "oops"], "KEY=VALUE"),
        (["--workers", "0"], "at least 1"),
        (["--input", "/nonexistent/file.csv"], "file.csv"),
        (["--config", "/nonexistent/overlay.yaml"], "overlay.yaml"),
        (["--messages", "-5"], "messages"),
    ],
)
def test_user_mistakes_are_one_line_errors(capsys, argv, message):
    assert main(["simulate", "--messages", "100", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_bad_csv_line_is_named(tmp_path, capsys):
    path = tmp_path / "bad.csv"
    path.write_text("a,1,10\nb,x,20\n")
    assert main(["simulate", "--input", str(path)]) == 2
    assert "line 2" in capsys.readouterr().err


def test_splitters_each_route_their_round_robin_share():
    keys = np.array([f"k{i % 7}" for i in range(1000)], dtype=object)
    times = np.arange(1000, dtype=np.int64)
    batches = [TupleBatch(keys[i : i + 300], np.ones(len(keys[i : i + 300]), np.int64),
                          times[i : i + 300]) for i in range(0, 1000, 300)]  # fmt: skip
    result = simulate(batches, [GroupingChoice("PARTIAL_KEY", "PARTIAL_KEY")],
                      SimulationSettings(workers=4, splitters=3, worker_window_ms=15_000,
                                         window_ms=60_000, process_ms=1.0, speed=1.0))[0]  # fmt: skip
    expected = np.zeros(4, dtype=np.int64)
    for splitter in range(3):
        routed = PartialKeyGrouping(4).route(keys[splitter::3], times[splitter::3])
        expected += np.bincount(routed, minlength=4)
    assert list(result.metrics.cumulative.loads) == expected.tolist()
