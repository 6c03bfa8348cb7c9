"""The commands README.md and docs/ show: each is accepted as written, and those without Spark run.

Every ``dkg`` line of a fenced shell block is parsed by ``dkg``'s own parser (an
option renamed or removed fails here); the ones that need neither Spark nor a
broker (``simulate``, ``config``, ``job list|validate``) run in this process on a
small dataset, and the scenarios of ``tests/integration/documented/`` run the
others against a real broker, Spark and object store. The benchmarks a page
names as ``python -m bench.X`` answer ``--help`` (their own tests run them
small), and the development commands run with pytest collecting only.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import subprocess
import sys

import pytest

from core.config.loader import AWS_ENVIRONMENT
from pipelines.cli import build_parser, main
from tests.documented_commands import DKG, OTHER, PAGES, REPO, RUNNABLE, dkg_argv


def test_the_pages_show_commands():
    assert len(DKG) >= 30 and OTHER  # the extraction still finds what the pages show


@pytest.mark.parametrize(("page", "command"), DKG, ids=[c for _, c in DKG])
def test_dkg_accepts_the_command(page, command):
    argv = dkg_argv(command)
    try:
        args = build_parser().parse_args(argv)
    except (SystemExit, argparse.ArgumentError) as exc:  # the parser reports and exits
        pytest.fail(f"{page}: dkg refuses {command!r}: {exc}")
    assert callable(args.handler)


@pytest.mark.parametrize(("page", "command"), RUNNABLE, ids=[c for _, c in RUNNABLE])
def test_the_command_runs(page, command, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DKG_DATASET__MESSAGES", "3000")  # the pages' commands, on less data
    (tmp_path / "conf").symlink_to(REPO / "conf")  # job specs are named relative to the checkout
    (tmp_path / "events.csv").write_text("key,count,timestamp_ms\n" + "".join(
        f"k{i % 7},1,{1000 * i}\n" for i in range(500)))  # fmt: skip
    code = main(dkg_argv(command))
    captured = capsys.readouterr()
    assert code == 0, f"{page}: {command!r} exited {code}: {captured.err[-2000:]}"
    assert captured.out.strip(), f"{page}: {command!r} printed nothing"


def _environment(command: str) -> tuple[dict[str, str], list[str]]:
    words = shlex.split(command)
    env = {}
    while words and re.match(r"^[A-Z_]+=", words[0]):
        name, _, value = words.pop(0).partition("=")
        env[name] = value
    return env, words


@pytest.mark.parametrize(("page", "command"), OTHER, ids=[c for _, c in OTHER])
def test_other_commands_are_what_they_say(page, command):
    env, words = _environment(command)
    program = words[0]
    if program == "export":  # object-store settings: each one a variable the project reads
        names = {word.partition("=")[0] for word in words[1:]}
        assert names <= set(AWS_ENVIRONMENT), f"{page}: {sorted(names - set(AWS_ENVIRONMENT))}"
        return
    if program == "scripts/test.sh":  # CI runs it: .ci/run is exactly this command
        ci = (REPO / ".ci" / "run").read_text()
        assert re.search(r"^exec scripts/test\.sh\s*$", ci, re.M), f"{page}: .ci/run runs no {program}"
        return
    if program == "scripts/run.sh":  # set up, then the main job with the same arguments
        script = (REPO / program).read_text()
        assert "scripts/setup.sh" in script and 'exec .venv/bin/dkg run "$@"' in script
        return
    tool = REPO / program
    assert tool.exists(), f"{page}: {program} does not exist"
    if program.endswith("pytest"):  # the same selection, collected only: no suite inside the suite
        words = [*words, "--collect-only", "-q", "-p", "no:cacheprovider"]
    elif words[1:2] == ["-m"] and words[2].startswith("bench."):  # long runs: tests run them small
        words = [*words[:3], "--help"]
    done = subprocess.run(words, cwd=REPO, env={**os.environ, **env}, capture_output=True,  # noqa: S603
                          text=True, timeout=240, check=False)  # fmt: skip
    assert done.returncode == 0, f"{page}: {command!r} exited {done.returncode}: {done.stdout[-1500:]}{done.stderr[-1500:]}"


def _benchmark_modules() -> list[str]:
    names = set()
    for page in PAGES:
        names.update(re.findall(r"python -m (bench\.\w+)", page.read_text(encoding="utf-8")))
    return sorted(names)


@pytest.mark.parametrize("module", _benchmark_modules())
def test_named_benchmarks_answer_help(module):
    done = subprocess.run([sys.executable, "-m", module, "--help"], cwd=REPO, capture_output=True,  # noqa: S603
                          text=True, timeout=120, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]


def test_no_page_names_a_benchmark_by_its_file():
    for page in PAGES:
        assert not re.search(r"python bench/\w+\.py", page.read_text(encoding="utf-8")), page.name
