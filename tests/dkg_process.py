"""``dkg`` as a user runs it: a process of its own, its whole stderr read, the JVM's included.

In-process calls of ``main`` see only what Python writes to ``sys.stderr``; a
user also sees what the JVM, warnings at import and exit handlers write to file
descriptor 2. These helpers run ``python -m pipelines.cli`` and check all of it.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

__all__ = ["PROJECT_INFO", "dkg", "dkg_all", "one_error_line"]

REPO = Path(__file__).resolve().parents[1]

PROJECT_INFO = re.compile(r"^INFO (core|pipelines|bronze|silver|gold)(\.\w+)*: ")
"""A progress line of the project's own loggers (what a job reports while it runs)."""


def dkg(argv: Sequence[str], cwd: Path, env: Mapping[str, str] | None = None,
        timeout_s: float = 180) -> subprocess.CompletedProcess[str]:  # fmt: skip
    """Run ``dkg argv`` in ``cwd`` with this environment plus ``env``; never longer than ``timeout_s``."""
    environment = {**os.environ, **(env or {}), "PYTHONPATH": str(REPO), "PYTHONUNBUFFERED": "1"}
    return subprocess.run([sys.executable, "-m", "pipelines.cli", *argv], cwd=cwd,  # noqa: S603
                          env=environment, capture_output=True, text=True, timeout=timeout_s,
                          check=False)  # fmt: skip


def dkg_all(argvs: Sequence[Sequence[str]], cwd: Path, parallel: int = 4,
            env: Mapping[str, str] | None = None, timeout_s: float = 180,
            ) -> dict[tuple[str, ...], subprocess.CompletedProcess[str]]:  # fmt: skip
    """Run several ``dkg`` processes, ``parallel`` at a time; results by argv.

    Each waits mostly on its interpreter starting, so a few at once take about
    the time of the slowest instead of the sum. ``timeout_s`` bounds each one.
    """
    unique = list(dict.fromkeys(tuple(argv) for argv in argvs))
    with ThreadPoolExecutor(max_workers=parallel) as pool:
        done = pool.map(lambda argv: dkg(argv, cwd, env, timeout_s), unique)
        return dict(zip(unique, done, strict=True))


def one_error_line(done: subprocess.CompletedProcess[str], command: str,
                   progress: bool = False) -> str:  # fmt: skip
    """The one line ``dkg command: error: ...`` that is the whole stderr; exit code 2.

    Args:
        done: the finished process.
        command: the subcommand the line must name (``run``, ``sql``, ...); empty for
            argparse's own mistakes before a subcommand is known (``dkg: error: ...``).
        progress: also allow the project's own INFO progress lines before it (a
            job that failed after it started); nothing from the JVM, no traceback.
    """
    shown = [line for line in done.stderr.splitlines()
             if not (progress and PROJECT_INFO.match(line))]  # fmt: skip
    report = f"exit code {done.returncode}; stderr:\n{done.stderr[-4000:]}"
    assert done.returncode == 2, report
    assert len(shown) == 1, report
    assert re.match(rf"dkg{' ' if command else ''}{command}( [\w-]+)?: error: ", shown[0]), report
    assert "Traceback" not in done.stdout, done.stdout[-4000:]
    return shown[0]
