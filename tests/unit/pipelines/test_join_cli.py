"""`dkg join` reports bad options as one-line errors before starting anything."""

from __future__ import annotations

import pytest

from pipelines.cli import main


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
