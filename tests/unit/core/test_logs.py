"""What the console shows: results, warnings and errors by default; every step's lines with -v."""

from __future__ import annotations

import logging

import pytest

from core.logs import RESULT, configure_logging
from pipelines.steps import STEP_LINE, job_step

# The details a default `dkg run` / `dkg join` used to surround its bars with.
DETAILS = [
    ("core.kafka.broker", "local Kafka broker up at 127.0.0.1:9092 (pid 1)"),
    ("core.kafka.admin", "created topic t on 127.0.0.1:9092"),
    ("core.kafka.producer", "the embedded broker saved t to disk after 0.82 s"),
    ("core.spark.python_workers", "Python workers started in 4.7 s"),
    ("pipelines.checks", "run r: bronze passed 1 data-quality suites"),
    ("gold.refresh", "gold refreshed for run r up to its silver batch 0"),
    ("pipelines.medallion", "run r stages: silver 9.7 s, gold 0.3 s"),
    ("pipelines.progress", "silver: 20,000/20,000 msg, 2,062 msg/s, batch 0, lag 0"),
    ("pipelines.join_pipeline", "join batch 0: 38,025 rows in 21,631 ms"),
    ("silver.join.sink", "join batch 0: 20002 rows written"),
]


@pytest.fixture
def console(capsys):
    """Logs a run's lines under ``configure_logging(**options)``; what stderr showed."""

    def show(**options) -> list[str]:
        configure_logging(logging.INFO, **options)
        capsys.readouterr()
        for name, message in DETAILS:
            logging.getLogger(name).info(message)
        with job_step("r", "silver"):
            pass
        with job_step("r", "bronze checks", result_line=False):
            pass
        logging.getLogger("bronze.producer").info("produced 20,000 messages to t in 0.9 s",
                                                  extra=RESULT)  # fmt: skip
        logging.getLogger("core.tables.delta_rs").warning("slow commit")
        logging.getLogger("pipelines.cli").error("failed")
        return capsys.readouterr().err.splitlines()

    yield show
    configure_logging(logging.INFO)


def test_by_default_only_results_warnings_and_errors_show(console):
    assert console(details=False) == [
        "run r: silver done in 0.0 s",
        "produced 20,000 messages to t in 0.9 s",
        "WARNING core.tables.delta_rs: slow commit",
        "ERROR pipelines.cli: failed",
    ]


def test_verbose_shows_every_info_line_as_the_crash_harness_reads_them(console):
    lines = console(details=True)
    assert [f"INFO {name}: {message}" for name, message in DETAILS] == lines[:len(DETAILS)]
    steps = [STEP_LINE.match(line) for line in lines[len(DETAILS):]]
    assert [(m["step"], m["event"]) for m in steps if m] == [
        ("silver", "started"), ("silver", "done"), ("bronze checks", "started"),
        ("bronze checks", "done")]  # fmt: skip
    assert lines[-3:] == ["INFO bronze.producer: produced 20,000 messages to t in 0.9 s",
                          "WARNING core.tables.delta_rs: slow commit", "ERROR pipelines.cli: failed"]


@pytest.mark.parametrize(("flags", "level", "details"), [
    ([], logging.INFO, False),
    (["-v"], logging.INFO, True),
    (["-vv"], logging.DEBUG, True),
    (["--verbose", "--verbose"], logging.DEBUG, True),
])  # fmt: skip
def test_the_cli_flag_chooses_the_console(monkeypatch, capsys, flags, level, details):
    import pipelines.cli as cli

    chosen = []
    monkeypatch.setattr(cli, "configure_logging", lambda *a, **k: chosen.append((a, k)))
    assert cli.main([*flags, "run", "--dataset", "NOPE"]) == 2  # fails before any work
    assert chosen == [((level,), {"details": details})]
