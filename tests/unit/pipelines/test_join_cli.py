"""`dkg join`: bad options are one-line errors before anything starts; statistics a line each."""

from __future__ import annotations

import pytest

from pipelines.cli import main
from pipelines.commands.join import statistics_lines


@pytest.mark.parametrize(("option", "message"), [
    (["--topics", "only-one"], "--topics takes LEFT,RIGHT"),
    (["--stall-partition", "7", "--partitions", "4"], "stall_partition must be in [0, 3]"),
    (["--match-ratio", "1.5"], "join.match_ratio: Input should be less than or equal to 1 "
                               "(from --match-ratio)"),
    (["--window-ms", "-1"], "must be 0 or more"),
    (["--topics", "a,b c"], "is not a Kafka topic name"),
])  # fmt: skip
def test_bad_options_are_one_line_errors(option, message, tmp_path, capsys):
    assert main(["join", *option, "--warehouse", str(tmp_path / "w")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"dkg join: error: {err[0].split('error: ', 1)[1]}"]
    assert message in err[0]
    assert not (tmp_path / "w").exists()  # failed before the warehouse or a broker


def test_statistics_print_one_a_line_with_values_aligned():
    row = {"lefts": 200_000, "matched": 179_630, "match_rate": 0.89815,
           "latency_p99_ms": 1115.1400000000003, "wrong_pairs": 0}  # fmt: skip
    assert statistics_lines(row).splitlines() == [
        "  lefts           200,000",
        "  matched         179,630",
        "  match_rate        0.898",
        "  latency_p99_ms    1,115",
        "  wrong_pairs           0",
    ]
