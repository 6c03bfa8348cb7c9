"""``dkg produce``: a dataset (or your CSV file's rows) into a Kafka topic, keyed, at a set speed.

Writes to ``--bootstrap-servers`` or to the embedded broker (started if it is not
running, and then stopped again; its data stays in ``kafka.embedded.run_dir``).
"""

from __future__ import annotations

import argparse
from typing import Any

from pipelines.commands.common import (
    add_config_options,
    load_from_args,
    positive_int,
    speed_factor,
    topic_name,
)
from pipelines.commands.simulate import DATASET_OPTIONS, add_dataset_options, dataset_spec

__all__ = ["add_parser", "run"]

PRODUCE_OPTIONS = {**DATASET_OPTIONS, "partitions": "kafka.topics.partitions",
                   "bootstrap_servers": "kafka.bootstrap_servers"}  # fmt: skip


def add_parser(subparsers: Any) -> None:
    """Register ``produce``."""
    parser = subparsers.add_parser(
        "produce", help="write a dataset's messages into a Kafka topic",
        description=__doc__,
    )  # fmt: skip
    add_dataset_options(parser)
    parser.add_argument(
        "--topic", type=topic_name, required=True, help="topic to write (created if missing)"
    )
    parser.add_argument("--partitions", type=positive_int,
                        help="partitions of a new topic (kafka.topics.partitions)")  # fmt: skip
    parser.add_argument("--speed", type=speed_factor,
                        help="event time runs this many times faster than real time "
                        "(default: as fast as possible)")  # fmt: skip
    parser.add_argument("--bootstrap-servers", help="Kafka to write to (default: the embedded broker)")
    add_config_options(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Produce and report."""
    from bronze.datasets.base import MessageSource
    from bronze.datasets.csv_input import CsvMessages
    from bronze.datasets.registry import make_dataset
    from bronze.producer import produce
    from pipelines.pipeline_runtime import open_runtime
    from pipelines.progress import ProgressReporter

    loaded = load_from_args(args, PRODUCE_OPTIONS)
    # An unknown dataset or a bad file fails here, before a broker starts.
    if args.input is not None:
        messages: MessageSource = CsvMessages(args.input)
        total, what = messages.tuples, f"rows of {args.input.name} as keyed-json"
    else:
        spec = dataset_spec(loaded.settings)
        messages, total, what = make_dataset(spec), spec.messages, f"{spec.name} messages"
    with open_runtime(loaded) as runtime, ProgressReporter(total, unit="msg") as progress:
        client = runtime.kafka
        written = produce(messages, client, args.topic, None, args.speed,
                          lambda n: progress.update_to(n, args.topic))  # fmt: skip
    print(f"produced {written:,} {what} to {args.topic} at {client.bootstrap}")
    return 0
