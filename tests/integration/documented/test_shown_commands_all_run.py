"""Every ``dkg`` command the pages show that needs Spark, a broker or object storage runs here.

Each ``test_shown_*`` module runs a scenario's commands and names them in its
``COMMANDS`` (or, rarely, in ``NOT_RUN`` with the reason it is not run); a command added to a page without a test that runs it fails here.
``dkg bench`` needs none of those, and runs below on fewer messages.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

from pipelines.commands.bench import GROUPINGS, WORKLOADS
from tests.documented_commands import SPARK
from tests.integration.documented.shown import Scenario, text_rows

BENCH = ".venv/bin/dkg bench"
SCENARIOS = sorted(p.stem for p in Path(__file__).parent.glob("test_shown_*.py")
                   if p.stem != Path(__file__).stem)  # fmt: skip


def test_every_shown_command_is_run_by_a_scenario():
    run_here = {BENCH}
    for name in SCENARIOS:
        module = importlib.import_module(f"tests.integration.documented.{name}")
        run_here |= {*module.COMMANDS, *getattr(module, "NOT_RUN", {})}  # NOT_RUN: skipped, why
    shown = {command for _, command in SPARK}
    assert not shown - run_here, f"shown, but no test runs them: {sorted(shown - run_here)}"
    assert not run_here - shown, f"run, but no page shows them: {sorted(run_here - shown)}"


def test_bench_measures_every_grouping_on_every_workload(tmp_path):
    done = Scenario(tmp_path).run(BENCH)
    assert done.code == 0, done
    headers = re.findall(r"^(.+), 2,000 tuples, W=(\d+),", done.out, re.M)
    assert headers == [(w.label, str(w.workers)) for w in WORKLOADS]
    for table in done.out.strip().split("\n\n"):  # a header line and its table per workload
        # The list's commas outside a grouping's parentheses separate groupings.
        labels = re.split(r",(?![^()]*\))", GROUPINGS)
        assert [row["grouping"] for row in text_rows(table)] == labels, table
