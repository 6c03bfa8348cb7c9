"""``dkg run``: the main job, end to end on embedded defaults.

Starts a local broker unless ``--bootstrap-servers`` is given, produces the
dataset (once: a topic that already holds it is reused), drains it through
bronze -> silver -> gold for each grouping, prints the metrics per grouping
and where the tables are. The seed launcher's arguments are options.
"""

from __future__ import annotations

import argparse
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pipelines.commands.common import (
    UsageError,
    add_config_options,
    config_from_args,
    format_table,
    positive_int,
    speed_factor,
    topic_name,
)
from pipelines.commands.simulate import TABLE_COLUMNS, add_dataset_options, dataset_spec
from pipelines.simulate import parse_grouping_choices

__all__ = ["add_parser", "run"]

logger = logging.getLogger(__name__)


def add_parser(subparsers: Any) -> None:
    """Register ``run``."""
    parser = subparsers.add_parser(
        "run", help="the main job: Kafka -> bronze -> silver -> gold for each grouping",
        description=__doc__, formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )  # fmt: skip
    parser.add_argument("--mode", choices=("LOCAL", "CLUSTER"), default="LOCAL", type=str.upper,
                        help="LOCAL: Spark in this process; CLUSTER: --master spark://...")  # fmt: skip
    parser.add_argument("--master", help="Spark master URL (default local[2])")
    parser.add_argument("--source", dest="dataset", help="dataset (the seed's source type)")
    add_dataset_options(parser)
    parser.add_argument("--grouping", default="DYNAMIC_KEY", help="a grouping, a list, or 'all'")
    parser.add_argument(
        "--topic", type=topic_name, help="Kafka topic (default: derived from the dataset)"
    )
    parser.add_argument(
        "--partitions", type=positive_int, default=4, help="partitions of a new topic"
    )
    parser.add_argument("--workers", type=positive_int, default=10, help="number of workers W")
    parser.add_argument(
        "--splitters", type=positive_int, help="routing instances (default: partitions)"
    )
    parser.add_argument(
        "--speed", type=speed_factor, help="producer speed, e.g. x1, x10 (default: max)"
    )
    parser.add_argument("--warehouse", type=Path, default=Path("lakehouse"), help="warehouse root")
    parser.add_argument("--max-offsets-per-trigger", type=positive_int, default=500_000,
                        help="Kafka messages per bronze micro-batch (bounds memory)")  # fmt: skip
    parser.add_argument("--bootstrap-servers", help="a Kafka to use (default: a local broker)")
    parser.add_argument("--skip-checks", action="store_true",
                        help="do not validate each layer with the data-quality suites")  # fmt: skip
    add_config_options(parser)
    parser.set_defaults(handler=run, dataset=None)


def _with_progress(spark: Any, request: Any, job: Callable[[], list[dict[str, Any]]]
                   ) -> list[dict[str, Any]]:  # fmt: skip
    """Run ``job`` with one listener reporting every streaming query's progress."""
    from core.kafka.broker import end_offsets
    from pipelines.stream_progress import StreamProgressListener

    listener = StreamProgressListener(
        kafka_end=lambda: sum(end_offsets(request.bootstrap, request.topic).values())
    )
    spark.streams.addListener(listener)
    try:
        return job()
    finally:
        listener.wait_idle()
        spark.streams.removeListener(listener)


def _check_source(name: str) -> None:
    # Both the generator and silver's parser must know the dataset; asking now
    # fails a typo before the broker and Spark start.
    from bronze.datasets.registry import canonical_name
    from silver.parsers.registry import parser_for

    parser_for(canonical_name(name))


def run(args: argparse.Namespace) -> int:
    """Run the main job and print one metrics row per grouping."""
    from core.kafka.broker import LocalBroker, check_reachable
    from core.spark.session import build_spark
    from core.tables import DeltaRsBackend
    from core.warehouse import Warehouse
    from pipelines.main_job import JobRequest, ensure_topic_has, run_groupings
    from pipelines.progress import ProgressReporter
    from silver.groupings.registry import make_grouping

    if args.mode == "CLUSTER" and not (args.master or "").startswith("spark://"):
        raise UsageError("--mode CLUSTER needs --master spark://HOST:PORT")
    config = config_from_args(args)
    spec = dataset_spec(args, config)
    _check_source(spec.name)
    choices = parse_grouping_choices(args.grouping, config.grouping_params)
    for choice in choices:  # bad parameters fail here, not in a Spark task
        make_grouping(choice.name, args.workers, choice.params)
    warehouse = Warehouse(args.warehouse)
    topic = args.topic or f"{spec.name.lower()}-{spec.messages}-s{spec.seed}"
    if args.bootstrap_servers:
        check_reachable(args.bootstrap_servers)
    broker = None if args.bootstrap_servers else LocalBroker(warehouse.root / "_kafka")
    bootstrap = args.bootstrap_servers or broker.start()  # type: ignore[union-attr]
    try:
        request = JobRequest(spec, topic, args.partitions, args.workers,
                             args.splitters or args.partitions, args.speed, bootstrap,
                             [(c.label, c.name, c.params) for c in choices],
                             args.max_offsets_per_trigger,
                             quality=None if args.skip_checks else config.quality)  # fmt: skip
        with ProgressReporter(spec.messages, unit="msg", label=f"producing {topic}") as progress:
            ensure_topic_has(request, progress.update_to)
        logger.info("starting Spark on %s", args.master or "local[2]")
        spark = build_spark(app_name="dkg-run", master=args.master or "local[2]")
        rows = _with_progress(
            spark, request, lambda: run_groupings(spark, request, warehouse, DeltaRsBackend())
        )
    finally:
        if broker is not None:
            broker.stop()
    print(f"{spec.messages:,} {spec.name} messages from {topic}, W={args.workers}")
    print(format_table(rows, TABLE_COLUMNS))
    example = "SELECT * FROM gold.distribution_metrics"
    print(
        f"tables under {warehouse.root}/ (bronze, silver, gold); query them with "
        f'dkg sql "{example}" --warehouse {warehouse.root}'
    )
    return 0
