"""The commands README.md and docs/ show, read from the pages' fenced shell blocks.

One extraction for the tests that check them: ``tests/unit/test_documented_commands.py``
parses every ``dkg`` line and runs those without Spark; the scenarios of
``tests/integration/documented/`` run the others.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

__all__ = ["DKG", "OTHER", "PAGES", "REPO", "RUNNABLE", "SPARK", "dkg_argv", "shown_commands"]

REPO = Path(__file__).resolve().parents[1]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]

_BLOCK = re.compile(r"```(?:bash|sh)\n(.*?)```", re.S)
_COMMENT = re.compile(r"\s+#.*$")
_ALTERNATIVES = re.compile(r"^(?P<head>.*?)(?P<first>\S+)(?P<rest>(?: \| \S+)+)$")
_OPTIONAL = re.compile(r" \[(--[\w-]+)\]")
# Runs without Spark or a broker: these subcommands (job: only list and validate).
_RUNS_HERE = {"simulate", "config"}


def _expanded(line: str) -> list[str]:
    """``a | b | c`` alternatives and ``[--option]`` give one command each."""
    match = _ALTERNATIVES.match(line)
    if match:
        words = [match["first"], *match["rest"].split(" | ")[1:]]
        return [f"{match['head']}{word}" for word in words]
    optional = _OPTIONAL.search(line)
    if optional:
        return [_OPTIONAL.sub("", line), _OPTIONAL.sub(r" \1", line)]
    return [line]


def shown_commands() -> list[tuple[str, str]]:
    """(page, command) for every command line of the pages' shell blocks."""
    found = []
    for page in PAGES:
        for block in _BLOCK.findall(page.read_text(encoding="utf-8")):
            for raw in block.replace("\\\n", " ").splitlines():  # continued lines joined
                line = _COMMENT.sub("", raw).strip()
                if line and not re.match(r"dkg [\w-]+: ", line):  # output shown, not a command
                    found.extend((page.name, command) for command in _expanded(line))
    return found


def dkg_argv(command: str) -> list[str] | None:
    """The arguments after ``dkg`` (or ``.venv/bin/dkg``); None for another program."""
    words = shlex.split(command)
    if words and words[0] in ("dkg", ".venv/bin/dkg"):
        return words[1:]
    return None


def _runs_here(argv: list[str]) -> bool:
    return argv[0] in _RUNS_HERE or argv[:2] in (["job", "list"], ["job", "validate"])


DKG = [(page, command) for page, command in shown_commands() if dkg_argv(command) is not None]
"""Every ``dkg`` command of the pages, with its page."""
OTHER = [(page, command) for page, command in shown_commands() if dkg_argv(command) is None]
"""The pages' other commands (scripts, pytest, benchmarks, exports)."""
RUNNABLE = [(page, command) for page, command in DKG if _runs_here(dkg_argv(command) or [])]
"""The ``dkg`` commands that need neither Spark nor a broker."""
SPARK = [(page, command) for page, command in DKG if (page, command) not in RUNNABLE]
"""The ``dkg`` commands that need Spark, a broker or object storage."""
