"""The wheel, installed as a user (or a Databricks job) installs it, finds its settings, job
specs and SQL: ``conf/`` travels in the wheel (pyproject.toml's data-files).

The wheel is built from this checkout and installed without dependencies into a fresh
virtual environment; the dependencies come from this one's site-packages, added to
the path (its editable finder for the project's own packages is not, so the code that
runs is the wheel's). Nothing of the checkout is on the path or in the working folder.
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[3]


def _run(argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=240,  # noqa: S603
                          check=False)  # fmt: skip


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    """A fresh venv holding the wheel alone, and the environment that runs it."""
    root = tmp_path_factory.mktemp("wheel")
    built = _run([sys.executable, "-m", "pip", "wheel", str(REPO), "--no-deps", "--no-build-isolation", "-q", "-w",
                  str(root / "dist")], root)  # fmt: skip
    assert built.returncode == 0, built.stderr[-2000:]
    (wheel,) = (root / "dist").glob("dkg_lakehouse-*.whl")
    venv = root / "venv"
    assert _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], root).returncode == 0
    # --ignore-installed: pip would otherwise uninstall this environment's own (editable) copy.
    done = _run([sys.executable, "-m", "pip", "install", "--no-deps", "--ignore-installed", "-q",
                 "--prefix", str(venv), str(wheel)], root)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    kept = _run([sys.executable, "-c", "import pipelines; print(pipelines.__file__)"], root)
    assert kept.stdout.startswith(str(REPO)), kept.stderr[-2000:]  # this environment's copy untouched
    env = {**{k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
           "PYTHONPATH": sysconfig.get_paths()["purelib"]}  # the dependencies, not the checkout
    return venv, env


def test_the_installed_wheel_reads_its_own_settings_specs_and_sql(installed, tmp_path):
    venv, env = installed
    python, conf = str(venv / "bin" / "python"), venv / "share" / "dkg-lakehouse" / "conf"
    shipped = {p.relative_to(REPO / "conf") for p in (REPO / "conf").rglob("*") if p.is_file()}
    assert {p.relative_to(conf) for p in conf.rglob("*") if p.is_file()} == shipped
    shown = _run([python, "-m", "pipelines.cli", "config", "show"], tmp_path, env)
    assert shown.returncode == 0, shown.stderr[-2000:]
    assert "run.workers" in shown.stdout
    # The specs found by name are the installed ones: the checkout's code would list its own.
    listed = _run([python, "-m", "pipelines.cli", "job", "list"], tmp_path, env)
    assert listed.returncode == 0, listed.stderr[-2000:]
    assert [line.split(": job ")[0] for line in listed.stdout.splitlines()] == [
        str(conf / "jobs" / f"{name}.yml") for name in ("compare_groupings", "follow_topic", "lakehouse")]
