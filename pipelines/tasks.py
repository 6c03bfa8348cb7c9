"""Console scripts that job specs call as ``python_wheel_task`` entry points.

Each is a thin ``main(argv) -> int`` over an existing command, so a task of a
job spec behaves exactly like the ``dkg`` subcommand it wraps, errors included:
``dkg-run`` is ``dkg run``, ``dkg-sql`` is ``dkg sql``; ``dkg-produce`` makes sure
a topic holds a dataset (producing it once, like ``dkg run`` does), on the
embedded broker when no ``--bootstrap-servers`` is given.

:func:`task_resources` reads from a task's arguments what it will use (Kafka,
Spark, with which settings), so a job run can have them ready and share them.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pipelines.cli import main as dkg_main

if TYPE_CHECKING:
    from core.config import LoadedSettings

__all__ = ["TaskResources", "produce_main", "run_main", "sql_main", "task_resources"]


def _argv(argv: Sequence[str] | None) -> list[str]:
    return list(sys.argv[1:] if argv is None else argv)


def run_main(argv: Sequence[str] | None = None) -> int:
    """``dkg-run ARGS`` = ``dkg run ARGS``: the main job, Kafka -> bronze -> silver -> gold."""
    return dkg_main(["run", *_argv(argv)])


def sql_main(argv: Sequence[str] | None = None) -> int:
    """``dkg-sql ARGS`` = ``dkg sql ARGS``: a query (or ``--file``) over the warehouse."""
    return dkg_main(["sql", *_argv(argv)])


def _produce_parser() -> argparse.ArgumentParser:
    from pipelines.cli import Parser
    from pipelines.commands.common import add_config_options, positive_int, speed_factor, topic_name
    from pipelines.commands.simulate import add_dataset_options

    parser = Parser(
        prog="dkg-produce", description="Make sure a Kafka topic holds a dataset (produce it once).",
    )  # fmt: skip
    add_dataset_options(parser)
    parser.add_argument("--topic", type=topic_name, required=True,
                        help="topic to fill (created if missing)")  # fmt: skip
    parser.add_argument("--partitions", type=positive_int, help="partitions of a new topic")
    parser.add_argument("--speed", type=speed_factor, help="event-time speed-up (default: max)")
    parser.add_argument("--bootstrap-servers", help="a Kafka to use (default: the embedded broker)")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    add_config_options(parser)
    return parser


def _produce(args: argparse.Namespace) -> int:
    from bronze.datasets.registry import make_dataset
    from pipelines.commands.common import load_from_args
    from pipelines.commands.produce import PRODUCE_OPTIONS
    from pipelines.commands.simulate import dataset_spec
    from pipelines.grouping_runs import ensure_topic_has
    from pipelines.pipeline_runtime import open_runtime

    loaded = load_from_args(args, PRODUCE_OPTIONS)
    spec = dataset_spec(loaded.settings)
    dataset = make_dataset(spec)  # an unknown dataset fails here, before a broker starts
    with open_runtime(loaded) as runtime:
        present = ensure_topic_has(runtime.kafka, args.topic, dataset, spec.messages, args.speed)
    print(f"topic {args.topic} holds {present:,} {spec.name} messages")
    return 0


def produce_main(argv: Sequence[str] | None = None) -> int:
    """``dkg-produce``: fill a topic with a dataset unless it already holds it."""
    import logging

    from core.errors import USER_ERRORS, describe
    from core.logs import configure_logging
    from pipelines.cli import CommandLineError

    try:
        args = _produce_parser().parse_args(_argv(argv))
    except CommandLineError as exc:
        print(f"dkg-produce: error: {exc}", file=sys.stderr)
        return 2
    configure_logging(logging.DEBUG if args.verbose else logging.INFO)
    try:
        return _produce(args)
    except USER_ERRORS as exc:
        print(f"dkg-produce: error: {describe(exc)}", file=sys.stderr)
        return 2


@dataclass(frozen=True)
class TaskResources:
    """What a task will run on: its settings, and whether it uses Kafka and Spark."""

    loaded: LoadedSettings
    kafka: bool
    spark: bool


# dkg subcommand -> (uses Kafka, uses Spark); other subcommands are not looked into.
_USES = {"run": (True, True), "produce": (True, False), "sql": (False, True)}
_SUBCOMMAND = {"pipelines.tasks:run_main": ["run"], "pipelines.tasks:sql_main": ["sql"],
               "pipelines.cli:main": []}  # fmt: skip


def _options(command: str) -> Mapping[str, str]:
    from pipelines.commands.produce import PRODUCE_OPTIONS
    from pipelines.commands.run import RUN_OPTIONS
    from pipelines.commands.sql import SQL_OPTIONS

    return {"run": RUN_OPTIONS, "produce": PRODUCE_OPTIONS, "sql": SQL_OPTIONS}[command]


def _parse(target: str, argv: list[str]) -> tuple[str, argparse.Namespace] | None:
    from pipelines.cli import build_parser

    if target == "pipelines.tasks:produce_main":
        return "produce", _produce_parser().parse_args(argv)
    if target not in _SUBCOMMAND:
        return None
    args = build_parser().parse_args([*_SUBCOMMAND[target], *argv])
    return str(args.command), args


def task_resources(target: str, argv: Sequence[str]) -> TaskResources | None:
    """What the task ``target`` (``module:function``) called with ``argv`` will use.

    None for a script or subcommand not known here, and for arguments the task
    will refuse (it then says why itself).
    """
    from core.errors import USER_ERRORS
    from pipelines.commands.common import load_from_args

    try:
        parsed = _parse(target, list(argv))
        if parsed is None or parsed[0] not in _USES:
            return None
        command, args = parsed
        loaded = load_from_args(args, _options(command))
    except (SystemExit, *USER_ERRORS):
        return None
    kafka, spark = _USES[command]
    return TaskResources(loaded, kafka, spark)
