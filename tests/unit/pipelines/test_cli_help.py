"""`dkg <command> --help`: plain text, one default per option at most, none that says nothing."""

from __future__ import annotations

import re

import pytest

from pipelines.cli import main

COMMANDS = [[], ["run"], ["simulate"], ["produce"], ["kafka"], ["bench"], ["sql"], ["report"],
            ["check"], ["job"], ["job", "run"], ["job", "validate"], ["job", "list"], ["join"],
            ["config"]]  # fmt: skip


def _help(capsys, monkeypatch, argv: list[str]) -> str:
    monkeypatch.setenv("COLUMNS", "80")
    with pytest.raises(SystemExit) as exited:
        main([*argv, "--help"])
    assert exited.value.code == 0
    return capsys.readouterr().out


def _entries(text: str) -> list[str]:
    """The argument entries: a line indented by two spaces and its deeper-indented lines."""
    section = text.split("\noptions:\n", 1)[1]
    entries: list[str] = []
    for line in section.splitlines():
        if re.match(r"  \S", line):
            entries.append(line.strip())
        elif line.startswith("   ") and entries:
            entries[-1] += " " + line.strip()
    return [" ".join(entry.split()) for entry in entries]


@pytest.mark.parametrize("argv", COMMANDS, ids=lambda argv: " ".join(argv) or "dkg")
def test_help_is_plain_text_with_no_empty_or_repeated_default(argv, capsys, monkeypatch):
    text = _help(capsys, monkeypatch, argv)
    for empty in ("(default: None)", "(default: [])", "(default: False)"):
        assert empty not in text
    assert "``" not in text and ":func:" not in text and ":mod:" not in text
    assert "`" not in text  # no Markdown either
    for entry in _entries(text):
        assert entry.count("default:") <= 1, entry
    assert max(map(len, text.splitlines())) <= 80


@pytest.mark.parametrize(("argv", "entry"), [
    (["sql"], "--limit LIMIT rows to print at most (default: 100)"),
    (["bench"], "--messages MESSAGES messages per workload (default: 1,000,000)"),
    (["report"], "--output OUTPUT HTML file to write (default: report.html)"),
    (["run"], "--mode {LOCAL,CLUSTER} LOCAL: Spark in this process; CLUSTER: --master "
              "spark://... (default: LOCAL)"),
    # Its help names the default itself: no second one.
    (["check"], "--run-id RUN_ID check only this run (default: every run in gold.runs)"),
    (["simulate"], "--workers WORKERS number of workers W"),  # from the configuration
    (["simulate"], "--json print JSON instead of a table"),
])  # fmt: skip
def test_an_option_shows_the_default_it_has(argv, entry, capsys, monkeypatch):
    assert entry in _entries(_help(capsys, monkeypatch, argv))


def test_a_docstring_description_reads_as_plain_paragraphs(capsys, monkeypatch):
    text = _help(capsys, monkeypatch, ["run"])
    description = text.split("\n\n", 1)[1].split("\noptions:\n", 1)[0]
    paragraphs = [" ".join(p.split()) for p in description.split("\n\n")]
    assert paragraphs[0] == ("dkg run: the main job, Kafka -> bronze -> silver -> gold for "
                             "each grouping.")  # fmt: skip
    assert "such as a topic of your own Kafka (--bootstrap-servers): up to" in paragraphs[1]
    assert "--bootstrap-\n" not in text  # an option is never split across lines


def test_version_names_the_installed_package(capsys):
    from importlib import metadata

    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out.strip() == f"dkg {metadata.version('dkg-lakehouse')}"
