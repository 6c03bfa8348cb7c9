"""``dkg sql`` before Spark: argument and syntax errors in one line (exit 2, no JVM started),
statements split and checked, SQL files by name, the shell's loop."""

from __future__ import annotations

import io
import re
import time
from pathlib import Path

import pytest

from pipelines.cli import build_parser, main
from pipelines.commands.common import UsageError
from pipelines.commands.run import _COMPARISON
from pipelines.commands.sql_shell import run_shell
from pipelines.commands.sql_text import statements_of
from pipelines.job_specs import load_job_spec

REPO = Path(__file__).resolve().parents[3]


def test_query_or_file_is_required(tmp_path, capsys):
    assert main(["sql", "--warehouse", str(tmp_path)]) == 2
    assert "give a query or --file" in capsys.readouterr().err
    query = tmp_path / "q.sql"
    query.write_text("SELECT 1;\n", encoding="utf-8")
    assert main(["sql", "SELECT 2", "--file", str(query), "--warehouse", str(tmp_path)]) == 2
    assert "one of them" in capsys.readouterr().err


def test_missing_file_is_a_one_line_error(tmp_path, capsys):
    assert main(["sql", "--file", str(tmp_path / "none.sql"), "--warehouse", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("dkg sql: error: cannot read") and err.count("\n") == 1


# Every query the pages show (fenced or not), the run command's suggestion and the
# job specs' dkg-sql tasks: the check before Spark must let each of them through.
_SHOWN_QUERY = re.compile(r'dkg sql "([^"]+)"[^\n]*\n(?!dkg sql: error: syntax error)')
"""A query a page shows (not one shown failing the check)."""


def _shown_queries() -> list[str]:
    pages = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    found = [q for page in pages for q in _SHOWN_QUERY.findall(page.read_text(encoding="utf-8"))]
    queries = [q for q in found if "..." not in q]  # "SELECT ...": a placeholder
    queries.append(_COMPARISON)
    for path in sorted((REPO / "conf" / "jobs").glob("*.yml")):
        spec = load_job_spec(path)
        for task in spec.tasks:
            if task.entry_point == "dkg-sql":
                arguments = spec.arguments(task, spec.parameters, "r")
                queries.extend(a for a in arguments if not a.startswith("--"))
    return queries


def test_the_pages_queries_are_all_found():
    queries = _shown_queries()
    assert len(queries) >= 10 and any("silver.quarantine" in q for q in queries)
    assert any("CREATE OR REPLACE TEMP VIEW spread" in q for q in queries)


@pytest.mark.parametrize("text", [*_shown_queries(),
                                  *(p.read_text() for p in sorted((REPO / "conf" / "sql").glob("*.sql")))])  # fmt: skip
def test_every_shown_statement_passes_the_check(text):
    assert statements_of(text)


@pytest.fixture
def jvm_children():
    """A function telling which java processes are children of this one (a started JVM is)."""

    def java() -> set[int]:
        found = set()
        for task in Path("/proc/self/task").iterdir():
            for pid in (task / "children").read_text().split():
                cmdline = Path(f"/proc/{pid}/cmdline")
                if cmdline.exists() and b"java" in cmdline.read_bytes():
                    found.add(int(pid))
        return found

    return java


@pytest.mark.parametrize(("query", "where"), [
    ("SELECT * FORM gold.run_comparison", "at or near 'gold' (line 1, column 15)"),
    ("SELECT label FROM gold.runs;\nSELECT count(*\nFROM gold.runs", "(line 3, column 1)"),
    ("SELECT 'unclosed", "an unclosed quote"),
])  # fmt: skip
def test_a_syntax_error_fails_at_once_without_spark(tmp_path, capsys, jvm_children, query, where):
    build_parser()  # what every dkg command does before it reads its options
    before = jvm_children()
    started = time.monotonic()
    # No warehouse there either: the statement is checked first.
    assert main(["sql", query, "--warehouse", str(tmp_path / "none")]) == 2
    seconds = time.monotonic() - started
    err = capsys.readouterr().err
    assert err.startswith("dkg sql: error: syntax error") and where in err and err.count("\n") == 1
    assert seconds < 1.0
    assert jvm_children() == before  # no driver JVM was started for it
    assert not (tmp_path / "none").exists()


def test_a_statement_the_check_refuses_can_still_go_to_spark(tmp_path, capsys):
    query = "SELECT window(ts, '1 minute') FROM t GROUP BY window(ts, '1 minute')"
    assert main(["sql", query, "--warehouse", str(tmp_path / "none")]) == 2
    assert "--no-syntax-check" in capsys.readouterr().err
    assert main(["sql", query, "--no-syntax-check", "--warehouse", str(tmp_path / "none")]) == 2
    assert "no warehouse at" in capsys.readouterr().err  # past the check, stopped before Spark


def test_statements_split_at_semicolons_outside_strings_and_comments():
    text = "-- first\nSELECT ';' AS a; /* ; */\n\n  SELECT 2 -- two;\n;;\nSHOW TABLES"
    assert [(s.text, s.line, s.column) for s in statements_of(text)] == [
        ("SELECT ';' AS a", 2, 1), ("SELECT 2", 4, 3), ("SHOW TABLES", 6, 1)]
    with pytest.raises(UsageError, match="no SQL statement"):
        statements_of(" ;\n-- nothing\n")


@pytest.mark.parametrize("given", ["hot_keys", "hot_keys.sql", "conf/sql/hot_keys.sql"])
def test_a_projects_sql_file_is_found_by_name_from_any_folder(tmp_path, capsys, monkeypatch,
                                                              given):  # fmt: skip
    monkeypatch.chdir(tmp_path)
    assert main(["sql", "--file", given, "--warehouse", "none"]) == 2
    assert "no warehouse at" in capsys.readouterr().err  # read and checked, then no warehouse


def test_an_unknown_sql_file_names_the_projects(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["sql", "--file", "hot_key", "--warehouse", "none"]) == 2
    err = capsys.readouterr().err
    assert "cannot read hot_key: no such file" in err and "hot_keys, quarantine_reasons" in err


def test_shell_needs_no_query(tmp_path, capsys):
    assert main(["sql", "--shell", "SELECT 1", "--warehouse", str(tmp_path)]) == 2
    assert "--shell reads the statements as they are typed" in capsys.readouterr().err


def test_the_shell_runs_each_statement_as_it_ends(monkeypatch, capsys):
    typed = "SELECT 1 AS a;\nSELECT\n  2 AS b; SELEC 3;\nSELECT 'x;y' AS c;\nexit\nSELECT 9;\n"
    monkeypatch.setattr("sys.stdin", io.StringIO(typed))
    ran: list[str] = []

    def rows(statement):
        ran.append(statement.text)
        return [{"n": len(ran)}]

    assert run_shell(rows, lambda result: print(result)) == 1  # a statement failed, not a terminal
    # What was typed up to a ';' is checked whole before any of it runs.
    assert ran == ["SELECT 1 AS a", "SELECT 'x;y' AS c"]
    captured = capsys.readouterr()
    assert captured.out.splitlines() == ["[{'n': 1}]", "[{'n': 2}]"]
    assert captured.err.startswith("error: syntax error at or near '3' (line 2, column 17)")
