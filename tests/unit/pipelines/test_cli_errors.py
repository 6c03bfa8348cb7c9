"""User mistakes on the command line: one line on stderr naming the problem, exit code 2.

None of these may start Spark or a broker: each fails while the options are
read or checked, so the whole module runs in about a second.
"""

from __future__ import annotations

import pytest

from pipelines.cli import main


def _one_line_error(capsys, argv: list[str], *names: str) -> str:
    assert main(argv) == 2
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert "Traceback" not in captured.err + captured.out
    assert len(err.splitlines()) == 1, err
    assert err.startswith("dkg"), err
    for name in names:
        assert name in err, err
    return err


@pytest.mark.parametrize(("argv", "names"), [
    (["run", "--workers", "-3"], ["--workers", "at least 1", "-3"]),
    (["run", "--workers", "ten"], ["--workers", "whole number", "ten"]),
    (["run", "--messages", "0"], ["--messages", "at least 1"]),
    (["run", "--messages", "-5"], ["--messages", "-5"]),
    (["run", "--partitions", "0"], ["--partitions", "at least 1"]),
    (["run", "--splitters", "0"], ["--splitters"]),
    (["run", "--max-offsets-per-trigger", "0"], ["--max-offsets-per-trigger"]),
    (["run", "--speed", "fast"], ["--speed", "fast"]),
    (["run", "--speed", "x0"], ["--speed", "x0"]),
    (["run", "--speed", "-2"], ["--speed"]),
    (["run", "--grouping", "KEYS"], ["unknown grouping", "KEYS"]),
    (["run", "--grouping", "DYNAMIC_KEY(mode=turbo)"], ["mode"]),
    (["run", "--dataset", "NOPE"], ["unknown dataset", "NOPE"]),
    (["run", "--source", "zipff"], ["zipff"]),
    (["run", "--topic", "bad/topic"], ["--topic", "bad/topic"]),
    (["run", "--mode", "CLUSTER"], ["--master spark://"]),
    (["run", "--mode", "moon"], ["--mode", "MOON"]),
    (["run", "--frobnicate"], ["unrecognized arguments", "--frobnicate"]),
    (["run", "--set", "oops"], ["KEY=VALUE"]),
    (["run", "--set", "run.wrokers=3"], ["run.wrokers", "--set run.wrokers"]),
    (["run", "--format", "morse"], ["--format", "morse", "keyed-json"]),
    (["run", "--format", "keyed-json"], ["--topic"]),
    (["run", "--continuous", "--grouping", "KEY,SHUFFLE"], ["one grouping"]),
    (["config", "show", "--profile", "prod"], ["no profile 'prod'"]),
    ([], ["COMMAND"]),
    (["fly"], ["invalid choice", "fly"]),
    (["produce", "--topic", "t", "--messages", "0"], ["--messages"]),
    (["produce", "--topic", "t", "--partitions", "-1"], ["--partitions"]),
    (["produce", "--topic", "t", "--speed", "slow"], ["--speed", "slow"]),
    (["produce"], ["--topic"]),
    (["kafka", "up", "--port", "70000"], ["--port", "70000"]),
    (["kafka", "sideways"], ["sideways"]),
    (["simulate", "--workers", "0"], ["--workers", "at least 1"]),
    (["simulate", "--rate", "nan"], ["--rate"]),
    (["sql"], ["query"]),
    (["sql", "SELECT 1", "--limit", "-1"], ["--limit"]),
])  # fmt: skip
def test_bad_arguments(capsys, argv, names):
    _one_line_error(capsys, argv, *names)


@pytest.mark.parametrize(("text", "names"), [
    ("run: [workers: 3\n", ["overlay.yaml", "line", "not valid YAML"]),
    ("run:\n  wrokers: 3\n", ["overlay.yaml", "wrokers", "not permitted"]),
    ("run:\n  workers: many\n", ["overlay.yaml", "run.workers", "integer"]),
    ("run:\n  workers: 0\n", ["run.workers", "greater than or equal to 1"]),
    ("- a list\n", ["overlay.yaml", "mapping"]),
])  # fmt: skip
@pytest.mark.parametrize("command", [["run"], ["simulate"], ["produce", "--topic", "t"]])
def test_bad_yaml_config(capsys, tmp_path, text, names, command):
    overlay = tmp_path / "overlay.yaml"
    overlay.write_text(text)
    argv = [*command, "--config", str(overlay), "--warehouse", str(tmp_path / "wh")]
    if command[0] != "run":
        argv = argv[:-2]
    _one_line_error(capsys, argv, *names)


@pytest.mark.parametrize(("data", "names"), [
    (b"run:\n  workers: \xff\n", ["overlay.yaml", "not UTF-8"]),
    (b"run: \x00\n", ["overlay.yaml", "not valid YAML", "#x0000"]),  # PyYAML's message spans lines
])  # fmt: skip
@pytest.mark.parametrize("command", [["config", "show", "--config"], ["job", "validate"]])
def test_unreadable_yaml_text(capsys, tmp_path, data, names, command):
    path = tmp_path / "overlay.yaml"
    path.write_bytes(data)
    _one_line_error(capsys, [*command, str(path)], *names)


@pytest.mark.parametrize("key", ["a\\nb", "a\\x1eb", "a\\u2028b"])  # YAML escapes: real breaks
@pytest.mark.parametrize("command", [["config", "show", "--config"], ["job", "validate"]])
def test_a_line_break_in_a_mistaken_key_stays_escaped(capsys, tmp_path, key, command):
    from core.config import default_conf_dir

    valid = (default_conf_dir() / "jobs" / "lakehouse.yml").read_text() if command[0] == "job" else ""
    path = tmp_path / "overlay.yaml"
    path.write_text(f'{valid}\n"{key}": 1\n')
    _one_line_error(capsys, [*command, str(path)], key)


def test_missing_config_file(capsys, tmp_path):
    _one_line_error(capsys, ["run", "--config", str(tmp_path / "nope.yaml")], "nope.yaml",
                    "No such file")  # fmt: skip


@pytest.mark.parametrize("command", [
    ["run"],
    ["produce", "--topic", "t"],
])  # fmt: skip
@pytest.mark.parametrize(("servers", "names"), [
    ("127.0.0.1:1", ["cannot reach Kafka", "127.0.0.1:1", "refused"]),
    ("no-port-here", ["cannot reach Kafka", "HOST:PORT"]),
])  # fmt: skip
def test_unreachable_broker(capsys, tmp_path, command, servers, names):
    argv = [*command, "--bootstrap-servers", servers, "--messages", "10"]
    if command[0] == "run":
        argv += ["--warehouse", str(tmp_path / "wh")]
    _one_line_error(capsys, argv, *names)


def _unwritable(tmp_path, kind: str) -> str:
    if kind == "under a file":
        (tmp_path / "plain-file").write_text("x")
        return str(tmp_path / "plain-file" / "warehouse")
    if kind == "a file":
        (tmp_path / "plain-file").write_text("x")
        return str(tmp_path / "plain-file")
    # sysfs refuses new folders even to root (these tests may run as root, where
    # permission bits on a temporary folder would not stop anything).
    return "/sys/dkg-warehouse"


@pytest.mark.parametrize("kind", ["under a file", "a file", "read-only folder"])
@pytest.mark.parametrize("command", [["run", "--messages", "10"], ["sql", "SELECT 1"]])
def test_unwritable_or_missing_warehouse(capsys, tmp_path, kind, command):
    path = _unwritable(tmp_path, kind)
    err = _one_line_error(capsys, [*command, "--warehouse", path])
    assert path in err or "no warehouse" in err


def test_verbose_keeps_the_traceback_for_debugging(capsys):
    assert main(["--verbose", "run", "--dataset", "NOPE"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" in err and err.strip().splitlines()[-1].startswith("dkg run: error:")
