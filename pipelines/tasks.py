"""Console scripts that job specs call as ``python_wheel_task`` entry points.

Each is a thin ``main(argv) -> int`` over an existing command, so a task of a
job spec behaves exactly like the ``dkg`` subcommand it wraps, errors included:
``dkg-run`` is ``dkg run``, ``dkg-sql`` is ``dkg sql``; ``dkg-produce`` makes sure
a topic holds a dataset (producing it once, like ``dkg run`` does), starting the
warehouse's local broker when no ``--bootstrap-servers`` is given.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

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
    from pipelines.commands.simulate import add_dataset_options

    parser = argparse.ArgumentParser(
        prog="dkg-produce", description="Make sure a Kafka topic holds a dataset (produce it once).",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )  # fmt: skip
    add_dataset_options(parser)
    parser.add_argument("--topic", required=True, help="topic to fill (created if missing)")
    parser.add_argument("--partitions", type=int, default=4, help="partitions of a new topic")
    parser.add_argument("--speed", type=float, help="event-time speed-up (default: max)")
    parser.add_argument("--warehouse", type=Path, default=Path("lakehouse"),
                        help="warehouse root; its local broker keeps data in <root>/_kafka")  # fmt: skip
    parser.add_argument("--bootstrap-servers", help="a Kafka to use (default: the local broker)")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    parser.set_defaults(config=[], settings=[])
    return parser


def _produce(args: argparse.Namespace) -> int:
    from bronze.datasets.registry import make_dataset
    from core.kafka.broker import LocalBroker
    from core.warehouse import Warehouse
    from pipelines.commands.common import UsageError, config_from_args
    from pipelines.commands.simulate import dataset_spec
    from pipelines.main_job import JobRequest, ensure_topic_has

    if args.partitions < 1:
        raise UsageError("--partitions must be at least 1")
    spec = dataset_spec(args, config_from_args(args))
    make_dataset(spec)  # an unknown dataset fails here, before a broker starts
    warehouse = Warehouse(args.warehouse)
    broker = None if args.bootstrap_servers else LocalBroker(warehouse.root / "_kafka")
    bootstrap = args.bootstrap_servers or broker.start()  # type: ignore[union-attr]
    try:
        request = JobRequest(spec, args.topic, args.partitions, 1, 1, args.speed, bootstrap, ())
        present = ensure_topic_has(request)
    finally:
        if broker is not None:
            broker.stop()
    print(f"topic {args.topic} holds {present:,} {spec.name} messages")
    return 0


def produce_main(argv: Sequence[str] | None = None) -> int:
    """``dkg-produce``: fill a topic with a dataset unless it already holds it."""
    import logging

    from core.logs import configure_logging
    from pipelines.cli import _describe, _user_errors

    args = _produce_parser().parse_args(_argv(argv))
    configure_logging(logging.DEBUG if args.verbose else logging.INFO)
    if not args.verbose:  # kafka-python logs every connection at INFO
        logging.getLogger("kafka").setLevel(logging.WARNING)
    try:
        return _produce(args)
    except _user_errors() as exc:
        print(f"dkg-produce: error: {_describe(exc)}", file=sys.stderr)
        return 2
