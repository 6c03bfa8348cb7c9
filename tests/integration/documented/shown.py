"""A command as a page shows it, run in this process with the placeholders filled in.

The pages leave some values to the reader: a Kafka of your own (``kafka:9092``), a
bucket (``s3://lake/dkg``), a folder (``/tmp/wh``), run ids (``RUN``, ``OTHER``).
:data:`PLACEHOLDERS` says what each becomes here. Sizes shrink through the
environment (``DKG_<SECTION>__<FIELD>``) where they are settings, and through the
options of :data:`SMALLER` where a command takes its size only as an option. Each
scenario runs its commands in a folder of its own, so a command's default
warehouse (``lakehouse``) and state (``.dkg``) land there.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from deltalake import DeltaTable

from pipelines.cli import main
from tests.documented_commands import REPO, dkg_argv

__all__ = [
    "DEFAULT_GROUPINGS",
    "PLACEHOLDERS",
    "SMALLER",
    "Done",
    "Scenario",
    "cumulative_metrics",
    "read_table",
    "report_blocks",
    "text_rows",
]  # fmt: skip

DEFAULT_GROUPINGS = ["DYNAMIC_KEY", "KEY", "PARTIAL_KEY"]
"""What the README says ``dkg run`` compares when no grouping is named."""

PLACEHOLDERS = {
    "kafka:9092": "{bootstrap}",  # a real broker (noida-db) the scenario starts
    "s3://lake/dkg": "s3://{bucket}/dkg",  # a bucket of the real S3 server (moto)
    "/tmp/wh": "{wh}",  # noqa: S108 - a warehouse in the scenario's folder
    "RUN": "{run}",  # run ids of an earlier command's runs
    "OTHER": "{other}",
}
"""What a page leaves to the reader -> what this test runs against."""

SMALLER = {
    # 1,000,000 messages per workload is the benchmark; the option is its only size.
    ".venv/bin/dkg bench": ["--messages", "2000"],
}  # fmt: skip
"""Options added to a command whose size no setting changes."""


@dataclass(frozen=True)
class Done:
    """A command that ran: what ran, its exit code and what it printed."""

    command: str
    argv: list[str]
    code: int
    out: str

    def __str__(self) -> str:
        return f"{self.command!r} as {self.argv} exited {self.code}; printed:\n{self.out[-3000:]}"


@dataclass
class Scenario:
    """A folder and environment in which commands run, the results by command, what else was read."""

    folder: Path
    env: dict[str, str] = field(default_factory=dict)
    names: dict[str, str] = field(default_factory=dict)
    done: dict[str, list[Done]] = field(default_factory=dict)
    seen: dict[str, Any] = field(default_factory=dict)  # read outside the commands, for the tests

    def __post_init__(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        # Job specs and SQL files are named relative to a checkout, as the pages show them.
        (self.folder / "conf").symlink_to(REPO / "conf")
        self.names.setdefault("wh", str(self.folder / "wh"))

    def argv(self, command: str) -> list[str]:
        """The command's arguments, placeholders filled in, size options added."""
        words = dkg_argv(command)
        assert words is not None, command
        filled = [PLACEHOLDERS.get(word, word).format(**self.names) for word in words]
        return [*filled, *SMALLER.get(command, [])]

    def run(self, command: str) -> Done:
        """Run ``command`` in the scenario's folder and environment; kept under its text."""
        argv = self.argv(command)
        out = io.StringIO()
        with pytest.MonkeyPatch.context() as patch, contextlib.redirect_stdout(out):
            patch.chdir(self.folder)
            for name, value in self.env.items():
                patch.setenv(name, value)
            code = main(argv)
        done = Done(command, argv, code, out.getvalue())
        self.done.setdefault(command, []).append(done)
        return done

    def last(self, command: str) -> Done:
        """The latest result of ``command``."""
        return self.done[command][-1]


def read_table(uri: str | Path, options: dict[str, str] | None = None) -> pd.DataFrame:
    """A Delta table as delta-rs reads it (not through the project's backend)."""
    return DeltaTable(str(uri), storage_options=options).to_pandas()


def cumulative_metrics(root: str | Path) -> pd.DataFrame:
    """Each run's cumulative row of ``gold.distribution_metrics``, with its label."""
    metrics = read_table(f"{root}/gold/distribution_metrics")
    runs = read_table(f"{root}/gold/runs")
    return metrics[metrics["scope"] == "cumulative"].merge(runs[["run_id", "label"]])


def report_blocks(path: Path) -> dict[str, list]:
    """The numbers a report embeds, by block name (``summary``, ``worker_load``, ...)."""
    html = path.read_text(encoding="utf-8")
    pattern = r'<script type="application/json" id="data-(\w+)">(.*?)</script>'
    return {name: json.loads(body) for name, body in re.findall(pattern, html, re.S)}


def text_rows(out: str) -> list[dict[str, str]]:
    """The rows of the table a command printed (header, dashes, rows; 2+ spaces apart)."""
    lines = out.strip().splitlines()
    rule = next(i for i, line in enumerate(lines) if re.fullmatch(r"[- ]+", line))
    header = re.split(r"\s{2,}", lines[rule - 1].strip())
    rows = []
    for line in lines[rule + 1 :]:
        cells = re.split(r"\s{2,}", line.strip())
        if len(cells) != len(header):
            break  # the table ended
        rows.append(dict(zip(header, cells, strict=True)))
    return rows
