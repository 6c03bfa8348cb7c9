"""``dkg run``: the main job, Kafka -> bronze -> silver -> gold for each grouping.

With no arguments it generates a dataset into the embedded broker (once: a
topic that already holds it is reused) and processes it; with ``--input FILE``
it does the same with the rows of your CSV file. With ``--format`` it
processes a topic as it is, such as a topic of your own Kafka
(``--bootstrap-servers``): up to the end offsets seen at start, or, with
``--continuous``, following the topic and refreshing gold until Ctrl-C or
SIGTERM; the same command resumes where it stopped. Settings not given as
options come from the configuration (``dkg config show``).
"""

from __future__ import annotations

import argparse
import logging
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from core.logs import RESULT
from pipelines.commands.common import (
    UsageError,
    add_config_options,
    add_queue_options,
    load_from_args,
    message_format,
    positive_int,
    topic_name,
)
from pipelines.commands.simulate import DATASET_OPTIONS, add_dataset_options

__all__ = ["RUN_OPTIONS", "add_parser", "run"]

logger = logging.getLogger(__name__)

RUN_OPTIONS = {**DATASET_OPTIONS, "master": "spark.master", "grouping": "run.grouping",
               "workers": "run.workers", "splitters": "run.splitters", "speed": "run.speed",
               "load": "run.load", "process_ms": "run.process_ms", "work": "run.work",
               "format": "run.format", "continuous": "run.continuous",
               "partitions": "kafka.topics.partitions", "warehouse": "warehouse.uri",
               "max_offsets_per_trigger": "run.bronze_max_offsets_per_trigger",
               "bootstrap_servers": "kafka.bootstrap_servers",
               "quality_gates": "run.quality_gates"}  # fmt: skip
"""``dkg run``'s options and the settings they set."""


_RATE_SAMPLE_S = 600.0
"""Time limit of the sample that gives a topic's tuple rate: long enough never to cut it
short, so the sample, and the rate, do not depend on the broker's speed."""

_COMPARISON = "SELECT label, p99_ms, capacity, capacity_vs_key, dist_cost FROM gold.run_comparison"
"""The query the job suggests next: its runs side by side."""


def add_parser(subparsers: Any) -> None:
    """Register ``run``."""
    parser = subparsers.add_parser(
        "run", help="the main job: Kafka -> bronze -> silver -> gold for each grouping",
        description=__doc__,
    )  # fmt: skip
    parser.add_argument("--mode", choices=("LOCAL", "CLUSTER"), default="LOCAL", type=str.upper,
                        help="LOCAL: Spark in this process; CLUSTER: --master spark://...")  # fmt: skip
    parser.add_argument("--master", help="Spark master URL (spark.master)")
    add_dataset_options(parser)
    parser.add_argument("--grouping", help="a grouping, a comma list, or 'all' (run.grouping)")
    parser.add_argument("--topic", type=topic_name,
                        help="Kafka topic (default: one named after the generated dataset)")  # fmt: skip
    parser.add_argument("--format", type=message_format,
                        help="process --topic as it is, its messages in this format "
                        f"({', '.join(_formats())}) or a dataset's (run.format)")  # fmt: skip
    parser.add_argument("--continuous", action="store_const", const=True,
                        help="follow the topic, refreshing gold, until Ctrl-C or SIGTERM")  # fmt: skip
    parser.add_argument("--partitions", type=positive_int,
                        help="partitions of a topic the job creates (kafka.topics.partitions)")  # fmt: skip
    parser.add_argument("--workers", type=positive_int, help="number of workers W (run.workers)")
    parser.add_argument("--splitters", type=positive_int,
                        help="routing instances (run.splitters; default: the topic's partitions)")  # fmt: skip
    add_queue_options(parser, speed_help="instead of --load: event time runs this many times "
                      "faster than real time in the queue model, and the producer of a generated "
                      "dataset is paced at it (without it, it writes as fast as it can)")  # fmt: skip
    parser.add_argument("--warehouse", help="warehouse root: a path or s3://bucket/prefix")
    parser.add_argument("--max-offsets-per-trigger", type=positive_int,
                        help="Kafka messages per bronze micro-batch "
                        "(run.bronze_max_offsets_per_trigger)")  # fmt: skip
    parser.add_argument("--bootstrap-servers",
                        help="your Kafka, HOST:PORT[,...] (default: the embedded broker)")  # fmt: skip
    parser.add_argument("--recompute", action="store_true",
                        help="run again from the topic's start, replacing the stored results "
                        "of the same run (by default a finished run prints them)")  # fmt: skip
    parser.add_argument("--skip-checks", dest="quality_gates", action="store_const", const=False,
                        help="do not validate each layer with the data-quality suites")  # fmt: skip
    add_config_options(parser)
    parser.set_defaults(handler=run)


def _formats() -> list[str]:
    from silver.parsers.registry import formats

    return formats()


@contextmanager
def _stop_on_signals() -> Iterator[threading.Event]:
    """An event set by the first SIGINT or SIGTERM; a second SIGINT interrupts at once."""
    stop = threading.Event()

    def request_stop(signum: int, _frame: Any) -> None:
        if stop.is_set() and signum == signal.SIGINT:
            raise KeyboardInterrupt
        logger.info("stopping after the current micro-batches (signal %d)", signum, extra=RESULT)
        stop.set()

    previous = {sig: signal.signal(sig, request_stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield stop
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _with_progress(spark: Any, kafka_end: Callable[[], int],
                   job: Callable[[], list[dict[str, Any]]]) -> list[dict[str, Any]]:  # fmt: skip
    """Run ``job`` with one live display per stage (see :mod:`pipelines.stream_progress`)."""
    from pipelines.stream_progress import stage_progress

    with stage_progress(spark, kafka_end):
        return job()


def run(args: argparse.Namespace) -> int:
    """Run the main job and print one metrics row per grouping."""
    from core.kafka.admin import BrokerError, end_offsets, topic_exists
    from core.spark.session import check_master_reachable
    from gold.runs import completed_results
    from pipelines.advice import topic_tuples_per_second
    from pipelines.commands.comparison import QueueSetting, format_comparison
    from pipelines.commands.run_input import run_input
    from pipelines.grouping_runs import ensure_topic_has, run_groupings
    from pipelines.pipeline_runtime import open_runtime
    from pipelines.planning import plan_runs
    from pipelines.progress import ProgressReporter
    from pipelines.simulate import parse_grouping_choices
    from silver.groupings.registry import make_grouping

    loaded = load_from_args(args, RUN_OPTIONS)
    settings, run_config = loaded.settings, loaded.settings.run
    if args.mode == "CLUSTER" and not settings.spark.master.startswith("spark://"):
        raise UsageError("--mode CLUSTER needs --master spark://HOST:PORT")
    check_master_reachable(settings.spark.master)  # before a broker starts or a topic fills
    choices = parse_grouping_choices(run_config.grouping, settings.grouping_params)
    for choice in choices:  # bad parameters fail here, not in a Spark task
        make_grouping(choice.name, run_config.workers, choice.params)
    if run_config.continuous and len(choices) != 1:
        raise UsageError("--continuous runs one grouping at a time; name one with --grouping "
                         f"(the configured run.grouping is {run_config.grouping})")
    source = run_input(args, settings)
    topic, tuples_per_s = source.topic, source.tuples_per_s
    with open_runtime(loaded, app_name="dkg-run") as runtime:
        warehouse, kafka = runtime.warehouse, runtime.kafka
        if source.messages is not None:
            pace = args.speed  # the producer runs flat out unless --speed is given
            with ProgressReporter(source.count, unit="msg", label=f"producing {topic}") as bar:
                ensure_topic_has(kafka, topic, source.messages, source.count, pace, bar.update_to)
        elif not topic_exists(kafka, topic):
            raise BrokerError(f"topic {topic!r} does not exist on {kafka.bootstrap}")
        elif run_config.speed is None and not run_config.continuous:
            # The load needs the topic's tuple rate: from a sample of fixed offsets, so the
            # same topic gives the same rate (and the same run ids) every time.
            tuples_per_s = topic_tuples_per_second(kafka, topic, source.source_type,
                                                   max_seconds=_RATE_SAMPLE_S)  # fmt: skip
        ends = end_offsets(kafka, topic)
        plans = plan_runs(run_config, topic, source.source, source.source_type, choices,
                          run_config.splitters or len(ends),
                          None if run_config.continuous else sum(ends.values()),
                          None if run_config.continuous else tuples_per_s)  # fmt: skip
        quality = settings.quality if run_config.quality_gates else None
        stored = (None if run_config.continuous or args.recompute else
                  completed_results(runtime.backend, warehouse, plans))  # fmt: skip
        if stored is not None:
            print(f"already complete in {warehouse.root}: the stored results (--recompute runs "
                  "them again)")  # fmt: skip
            rows = stored
        else:
            spark, backend = runtime.spark, runtime.backend
            with _stop_on_signals() as stop:
                rows = _with_progress(
                    spark, lambda: sum(end_offsets(kafka, topic).values()),
                    lambda: run_groupings(spark, kafka, plans, warehouse, backend, quality, stop,
                                          recompute=args.recompute),
                )  # fmt: skip
    splitters = plans[0].splitters
    why = " (one per Kafka partition)" if run_config.splitters is None else ""
    print(f"{source.described} from {topic}, W={run_config.workers}, {splitters} splitters{why}")
    print(format_comparison(rows, QueueSetting(run_config.workers, run_config.process_ms,
                                               plans[0].load, run_config.work)))  # fmt: skip
    where = f" --warehouse {warehouse.root}"
    print(f"tables under {warehouse.root}/ (bronze, silver, gold); next:")
    print(f"  dkg report{where}    # interactive charts of every run, in one HTML file")
    print(f'  dkg sql "{_COMPARISON}"{where}')
    return 0
