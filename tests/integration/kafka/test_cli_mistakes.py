"""User mistakes found once Spark or a broker is involved, as a user sees them.

Each case runs ``dkg`` as a process of its own and reads its whole stderr, the
driver JVM's included: one line ``dkg <command>: error: ...``, exit code 2, no
traceback, no Java stack, no log4j record. The processes run together from one
module fixture (a Spark start is several seconds each). The mistakes found
before anything starts are in tests/unit/pipelines/test_cli_errors.py.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pandas as pd
import pytest

from core.tables import DeltaRsBackend
from core.warehouse import Warehouse
from tests.dkg_process import dkg_all, one_error_line

pytestmark = pytest.mark.slow

CASES: dict[str, tuple[list[str], list[str]]] = {
    # Spark starts, then rejects the query (unchecked: the check before Spark would
    # refuse it at once; see tests/unit/pipelines/test_sql_cli.py).
    "bad SQL": (["sql", "SELEC * FROM gold.key_counts", "--warehouse", "wh", "--no-syntax-check"],
                ["query failed", "PARSE_SYNTAX_ERROR", "SELEC"]),
    "unknown table": (["sql", "SELECT * FROM gold.nope", "--warehouse", "wh"],
                      ["query failed", "TABLE_OR_VIEW_NOT_FOUND", "`gold`.`nope`"]),
    # The driver JVM starts and exits at once.
    "bad master URL": (["sql", "SELECT 1", "--warehouse", "wh", "--master", "foo://bar"],
                       ["Spark did not start", "Master must either be yarn or start with spark"]),
    "bad driver memory": (["sql", "SELECT 1", "--warehouse", "wh", "--set", "spark.driver_memory=lots"],
                          ["Spark did not start", "Invalid maximum heap size: -Xmxlots"]),
    # The broker answers; the topic is not there.
    "topic that does not exist": (["run", "--format", "keyed-json", "--topic", "no-such-topic",
                                   "--bootstrap-servers", "{bootstrap}", "--warehouse", "wh"],
                                  ["topic 'no-such-topic' does not exist on {bootstrap}"]),
}  # fmt: skip


def _argv(case: str, bootstrap: str) -> list[str]:
    return [a.format(bootstrap=bootstrap) for a in CASES[case][0]]


@pytest.fixture(scope="module")
def seen(bootstrap, tmp_path_factory) -> dict[tuple[str, ...], subprocess.CompletedProcess[str]]:
    """Every case's finished process; the warehouse holds one small gold table."""
    cwd: Path = tmp_path_factory.mktemp("mistakes")
    counts = pd.DataFrame({"run_id": ["r"], "key": ["k"], "count": [3]})
    DeltaRsBackend().append(Warehouse(cwd / "wh").table_uri("gold", "key_counts"), counts, "t", 0)
    # Two rounds of three at most 120 s each: inside the test time limit.
    return dkg_all([_argv(case, bootstrap) for case in CASES], cwd, parallel=3, timeout_s=120)


@pytest.mark.parametrize("case", CASES)
def test_one_line(seen, bootstrap, case):
    argv = _argv(case, bootstrap)
    err = one_error_line(seen[tuple(argv)], argv[0])
    for name in CASES[case][1]:
        assert name.format(bootstrap=bootstrap) in err, err
