"""``dkg produce``: a dataset into a Kafka topic, keyed, at a set speed, with progress."""

from __future__ import annotations

import argparse
from typing import Any

from pipelines.commands.common import add_config_options, positive_int, speed_factor, topic_name
from pipelines.commands.kafka import DEFAULT_RUN_DIR
from pipelines.commands.simulate import add_dataset_options, dataset_spec

__all__ = ["add_parser", "local_or_given_bootstrap", "run"]


def add_parser(subparsers: Any) -> None:
    """Register ``produce``."""
    parser = subparsers.add_parser(
        "produce", help="write a dataset's messages into a Kafka topic",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )  # fmt: skip
    add_dataset_options(parser)
    parser.add_argument(
        "--topic", type=topic_name, required=True, help="topic to write (created if missing)"
    )
    parser.add_argument(
        "--partitions", type=positive_int, default=4, help="partitions of a new topic"
    )
    parser.add_argument("--speed", type=speed_factor,
                        help="event time runs this many times faster than real time "
                        "(default: as fast as possible)")  # fmt: skip
    parser.add_argument("--bootstrap-servers", help="Kafka to write to (default: the local broker)")
    add_config_options(parser)
    parser.set_defaults(handler=run)


def local_or_given_bootstrap(given: str | None) -> str:
    """``--bootstrap-servers``, or the running local broker's address."""
    from core.kafka.broker import LocalBroker
    from pipelines.commands.common import UsageError

    if given:
        return given
    status = LocalBroker(DEFAULT_RUN_DIR).status()
    if not status.running or status.bootstrap is None:
        raise UsageError("no --bootstrap-servers given and no local broker running "
                         "(start one with `dkg kafka up`)")  # fmt: skip
    return status.bootstrap


def run(args: argparse.Namespace) -> int:
    """Produce and report."""
    from bronze.datasets.registry import make_dataset
    from bronze.producer import produce
    from pipelines.commands.common import config_from_args
    from pipelines.progress import ProgressReporter

    spec = dataset_spec(args, config_from_args(args))
    bootstrap = local_or_given_bootstrap(args.bootstrap_servers)
    with ProgressReporter(spec.messages, unit="msg") as progress:
        written = produce(make_dataset(spec), bootstrap, args.topic, args.partitions, args.speed,
                          lambda n: progress.update_to(n, args.topic))  # fmt: skip
    print(f"produced {written:,} {spec.name} messages to {args.topic} at {bootstrap}")
    return 0
