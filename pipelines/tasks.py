"""Console scripts that job specs call as ``python_wheel_task`` entry points.

Each is a thin ``main(argv) -> int`` over an existing command, so a task of a
job spec behaves exactly like the ``dkg`` subcommand it wraps, errors included:
``dkg-run`` is ``dkg run``, ``dkg-sql`` is ``dkg sql``; ``dkg-produce`` makes sure
a topic holds a dataset (producing it once, like ``dkg run`` does), on the
embedded broker when no ``--bootstrap-servers`` is given.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from pipelines.cli import main as dkg_main

__all__ = ["produce_main", "run_main", "sql_main"]


def _argv(argv: Sequence[str] | None) -> list[str]:
    return list(sys.argv[1:] if argv is None else argv)


def run_main(argv: Sequence[str] | None = None) -> int:
    """``dkg-run ARGS`` = ``dkg run ARGS``: the main job, Kafka -> bronze -> silver -> gold."""
    return dkg_main(["run", *_argv(argv)])


def sql_main(argv: Sequence[str] | None = None) -> int:
    """``dkg-sql ARGS`` = ``dkg sql ARGS``: a query (or ``--file``) over the warehouse."""
    return dkg_main(["sql", *_argv(argv)])


def _produce_parser() -> argparse.ArgumentParser:
    from pipelines.cli import _Parser
    from pipelines.commands.common import add_config_options, positive_int, speed_factor, topic_name
    from pipelines.commands.simulate import add_dataset_options

    parser = _Parser(
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
    from core.runtime import Runtime
    from pipelines.commands.common import load_from_args
    from pipelines.commands.produce import PRODUCE_OPTIONS
    from pipelines.commands.simulate import dataset_spec
    from pipelines.grouping_runs import ensure_topic_has

    loaded = load_from_args(args, PRODUCE_OPTIONS)
    spec = dataset_spec(loaded.settings)
    dataset = make_dataset(spec)  # an unknown dataset fails here, before a broker starts
    with Runtime(loaded) as runtime:
        present = ensure_topic_has(runtime.kafka, args.topic, dataset, spec.messages, args.speed)
    print(f"topic {args.topic} holds {present:,} {spec.name} messages")
    return 0


def produce_main(argv: Sequence[str] | None = None) -> int:
    """``dkg-produce``: fill a topic with a dataset unless it already holds it."""
    import logging

    from core.logs import configure_logging
    from pipelines.cli import CommandLineError, _describe, _user_errors

    try:
        args = _produce_parser().parse_args(_argv(argv))
    except CommandLineError as exc:
        print(f"dkg-produce: error: {exc}", file=sys.stderr)
        return 2
    configure_logging(logging.DEBUG if args.verbose else logging.INFO)
    try:
        return _produce(args)
    except _user_errors() as exc:
        print(f"dkg-produce: error: {_describe(exc)}", file=sys.stderr)
        return 2
