"""User mistakes on the command line: one line on stderr naming the problem, exit code 2.

None of these may start Spark or a broker: each fails while the options are
read or checked. The tables call ``main`` in-process (milliseconds a case) for
what each message says; ``test_seen_as_a_user`` runs ``dkg`` as a process once
for every way a mistake reaches the console (argparse, a command's own checks,
config files, the broker and warehouse checks, ``--verbose``) and reads its
whole stderr. Mistakes found after Spark starts are in
tests/integration/kafka/test_cli_mistakes.py.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from pipelines.cli import main
from tests.dkg_process import dkg_all, one_error_line


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
    (["run", "--dataset", "zipff"], ["zipff"]),
    (["run", "--topic", "bad/topic"], ["--topic", "bad/topic"]),
    (["run", "--mode", "CLUSTER"], ["--master spark://"]),
    (["run", "--mode", "moon"], ["--mode", "MOON"]),
    (["run", "--frobnicate"], ["unrecognized arguments", "--frobnicate"]),
    (["run", "--set", "oops"], ["KEY=VALUE"]),
    (["run", "--set", "run.wrokers=3"], ["unknown setting run.wrokers (did you mean run.workers?)", "--set run.wrokers"]),
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
    ("run:\n  wrokers: 3\n", ["overlay.yaml", "unknown setting run.wrokers (did you mean run.workers?)"]),
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
    assert list(tmp_path.iterdir()) == []  # the warehouse was checked, not created


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
    if kind != "read-only folder":  # what is wrong, not the OS's "File exists"
        assert f"{tmp_path / 'plain-file'} is a file, not a folder" in err, err


def test_verbose_keeps_the_traceback_for_debugging(capsys):
    assert main(["--verbose", "run", "--dataset", "NOPE"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" in err and err.strip().splitlines()[-1].startswith("dkg run: error:")


# One process per path to the console: an interpreter start and the parser cost ~0.4 s
# (a mistake found later, as a missing dataset, loads pandas: ~1.2 s), so all the cases
# above as processes would add ~30 s; these ~20 run a few at a time.
AS_A_USER: dict[str, tuple[list[str], list[str]]] = {
    "option type": (["run", "--workers", "-3"], ["--workers", "at least 1"]),
    "unknown option": (["run", "--frobnicate"], ["unrecognized arguments", "--frobnicate"]),
    "no command": ([], ["COMMAND"]),
    "nested command option": (["kafka", "up", "--port", "70000"], ["--port", "70000"]),
    "command check": (["run", "--format", "keyed-json"], ["--topic"]),
    "grouping parameter": (["run", "--grouping", "DYNAMIC_KEY(mode=turbo)"], ["mode"]),
    "unknown dataset": (["run", "--dataset", "NOPE"], ["unknown dataset", "NOPE"]),
    "setting typo": (["run", "--set", "run.wrokers=3"], ["run.wrokers"]),
    "yaml syntax": (["run", "--config", "bad.yaml", "--warehouse", "wh"], ["bad.yaml", "not valid YAML"]),
    "missing config": (["simulate", "--config", "nope.yaml"], ["nope.yaml", "No such file"]),
    "unknown profile": (["config", "show", "--profile", "prod"], ["no profile 'prod'"]),
    "closed broker port (run)": (["run", "--bootstrap-servers", "127.0.0.1:1", "--messages", "10",
                                  "--warehouse", "wh"], ["cannot reach Kafka", "127.0.0.1:1", "refused"]),
    "closed broker port (produce)": (["produce", "--topic", "t", "--bootstrap-servers", "127.0.0.1:1"],
                                     ["cannot reach Kafka", "127.0.0.1:1"]),
    "read-only warehouse": (["run", "--messages", "10", "--warehouse", "/sys/dkg-warehouse"],
                            ["/sys/dkg-warehouse", "not writable"]),
    "warehouse under a file": (["sql", "SELECT 1", "--warehouse", "plain-file/wh"],
                               ["no warehouse at", "plain-file/wh: ", "plain-file is a file, not a folder"]),
    "warehouse is a file": (["run", "--messages", "10", "--warehouse", "plain-file"],
                            ["plain-file is a file, not a folder"]),
    "unreadable query file": (["sql", "--file", "none.sql"], ["cannot read", "none.sql"]),
    "join option": (["join", "--topics", "only-one"], ["--topics takes LEFT,RIGHT"]),
    "bad csv line": (["simulate", "--input", "bad.csv"], ["line 2"]),
    "closed spark master port": (["run", "--mode", "CLUSTER", "--master", "spark://127.0.0.1:1",
                                  "--warehouse", "wh"], ["Spark master", "127.0.0.1:1", "refused"]),
}  # fmt: skip
"""Name -> command line and words its one error line must contain."""


@pytest.fixture(scope="module")
def seen(tmp_path_factory) -> tuple[Path, dict[tuple[str, ...], subprocess.CompletedProcess[str]]]:
    """Every ``AS_A_USER`` case's finished process, run from one working directory."""
    cwd = tmp_path_factory.mktemp("as-a-user")
    (cwd / "plain-file").write_text("x")
    (cwd / "bad.csv").write_text("a,1,10\nb,x,20\n")
    (cwd / "bad.yaml").write_text("run: [workers: 3\n")
    # Seconds each, ten times that beside the other worker's Spark on a loaded machine:
    # 120 s only fails a process that hangs.
    return cwd, dkg_all([argv for argv, _ in AS_A_USER.values()], cwd, timeout_s=120)


@pytest.mark.parametrize("case", AS_A_USER)
def test_seen_as_a_user(seen, case):
    argv, names = AS_A_USER[case]
    # argparse names the program alone for mistakes before the subcommand's own options.
    command = "" if case in {"unknown option", "no command"} else argv[0]
    err = one_error_line(seen[1][tuple(argv)], command)
    for name in names:
        assert name in err, err


def test_seen_as_a_user_left_nothing_behind(seen):
    # No case got as far as writing a table (./lakehouse is the default warehouse);
    # run checks its warehouse is writable before the broker, and creates nothing:
    # the closed broker port leaves no empty wh/ behind.
    assert {p.name for p in seen[0].iterdir()} == {"bad.csv", "bad.yaml", "plain-file"}


def test_verbose_shows_the_traceback_to_a_user(tmp_path):
    from tests.dkg_process import dkg

    done = dkg(["--verbose", "simulate", "--dataset", "NOPE"], tmp_path)
    assert done.returncode == 2 and "Traceback" in done.stderr
    assert done.stderr.strip().splitlines()[-1].startswith("dkg simulate: error:")


def test_the_parser_loads_no_heavy_library():
    # Every command builds the whole parser before it reads an option: a mistake (or --help)
    # must be answered without pandas, the routing kernels or Spark (~1.5 s of imports).
    code = ("import sys; from pipelines.cli import build_parser; build_parser(); "
            "print(' '.join(m for m in ('pandas', 'numba', 'pyspark') if m in sys.modules))")  # fmt: skip
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,  # noqa: S603
                          timeout=120, check=True)  # fmt: skip
    assert done.stdout.strip() == ""
