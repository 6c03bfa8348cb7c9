"""``dkg advise``: which grouping a topic needs, from a read-only sample of it.

Reads a sample of the topic (nothing is created, committed or joined on the
cluster: partitions are assigned, never subscribed), measures its skew, routes
the sample through every grouping at several W and models the workers' queues
at several loads, and recommends one grouping with the `dkg run` line to try it.

The rule: of the groupings whose dist_cost (workers per key, the partial counts
to merge) is modest, at most --max-dist-cost and no more than the capacity they
buy over KEY (twice KEY's capacity may cost twice the partial counts), the one
with the most capacity (the arrival rate before its busiest worker saturates);
capacities within 2 % of the highest tie and go to the lower dist_cost. So a
topic whose keys are spread thinly gets KEY (dist_cost 1), and one with a key
over a worker's share gets a grouping that splits it. See docs/advise.md.
"""

from __future__ import annotations

import argparse
import json
import logging
import shlex
import sys
from pathlib import Path
from typing import Any

from pipelines.commands.common import (
    add_config_options,
    load_from_args,
    message_format,
    positive_float,
    positive_int,
    topic_name,
)

__all__ = ["ADVISE_OPTIONS", "add_parser", "run"]

logger = logging.getLogger(__name__)

ADVISE_OPTIONS = {"workers": "run.workers", "load": "run.load", "process_ms": "run.process_ms",
                  "format": "run.format", "splitters": "run.splitters",
                  "bootstrap_servers": "kafka.bootstrap_servers",
                  "max_messages": "advise.max_messages", "max_seconds": "advise.max_seconds",
                  "chunks": "advise.chunks", "max_dist_cost": "advise.max_dist_cost"}  # fmt: skip
"""``dkg advise``'s options and the settings they set."""


def add_parser(subparsers: Any) -> None:
    """Register ``advise``."""
    parser = subparsers.add_parser(
        "advise", help="sample a topic and recommend the grouping its skew needs",
        description=__doc__,
    )  # fmt: skip
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--topic", type=topic_name, help="the Kafka topic to sample")
    source.add_argument("--input", type=Path, metavar="FILE",
                        help="CSV key,count,timestamp_ms (as dkg simulate --input) instead")  # fmt: skip
    parser.add_argument("--bootstrap-servers",
                        help="your Kafka, HOST:PORT[,...] (default: the embedded broker)")  # fmt: skip
    parser.add_argument("--format", type=message_format,
                        help="the messages' format (keyed-json, ...; default: run.format, else "
                        "told by a generated topic's name or by which parser reads the messages)")  # fmt: skip
    parser.add_argument("--workers", type=positive_int,
                        help="advise for this W only (default: run.workers, with W = 2, 4, 8, "
                        "16, 32 beside it)")  # fmt: skip
    parser.add_argument("--load", type=positive_float,
                        help="advise for this mean utilisation only (default: run.load, with "
                        "0.5, 0.8, 0.95 beside it)")  # fmt: skip
    parser.add_argument("--process-ms", type=positive_float,
                        help="service time per tuple, ms (run.process_ms)")  # fmt: skip
    parser.add_argument("--grouping", default="all",
                        help="'all', or a comma list, e.g. KEY,DYNAMIC_KEY(mode=seed)")  # fmt: skip
    parser.add_argument("--splitters", type=positive_int,
                        help="routing instances (run.splitters; default: one per partition)")  # fmt: skip
    parser.add_argument("--max-messages", type=positive_int,
                        help="messages to sample, spread over every partition's offsets "
                        "(advise.max_messages)")  # fmt: skip
    parser.add_argument("--max-seconds", type=positive_float,
                        help="stop sampling after this long (advise.max_seconds)")
    parser.add_argument("--chunks", type=positive_int,
                        help="runs of consecutive messages per partition, evenly spaced "
                        "(advise.chunks)")  # fmt: skip
    parser.add_argument("--max-dist-cost", type=positive_float,
                        help="the largest dist_cost the rule accepts (advise.max_dist_cost)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    add_config_options(parser)
    parser.set_defaults(handler=run)


def _grid(asked: Any, configured: Any, default: tuple[Any, ...]) -> tuple[Any, ...]:
    return (asked,) if asked is not None else tuple(sorted({*default, configured}))


def _command(args: argparse.Namespace, label: str, workers: int, fmt: str | None) -> str:
    if args.input is not None:
        line = ["dkg", "simulate", "--input", str(args.input)]
    else:
        line = ["dkg", "run", "--format", fmt or "", "--topic", args.topic]
    line += ["--grouping", label, "--workers", str(workers)]
    if args.load is not None:
        line += ["--load", f"{args.load:g}"]
    if args.topic is not None and args.bootstrap_servers:
        line += ["--bootstrap-servers", args.bootstrap_servers]
    return shlex.join(line)


def run(args: argparse.Namespace) -> int:
    """Sample, simulate, recommend, print."""
    from pipelines.advice.grid import GridSettings
    from pipelines.advice.text import format_advice
    from pipelines.advise import AdviseSettings, advise
    from pipelines.commands.advise_source import read_file, read_topic
    from pipelines.progress import ProgressReporter
    from pipelines.simulate import parse_grouping_choices
    from silver.groupings.registry import make_grouping

    loaded = load_from_args(args, ADVISE_OPTIONS)
    config = loaded.settings
    choices = parse_grouping_choices(args.grouping, config.grouping_params)
    workers = _grid(args.workers, config.run.workers, config.advise.workers)
    loads = _grid(args.load, config.run.load, config.advise.loads)
    for choice in choices:  # bad parameters fail before the topic is read
        make_grouping(choice.name, workers[0], choice.params)
    source = (read_file(args.input, config) if args.input is not None
              else read_topic(args, loaded))  # fmt: skip
    grid = GridSettings(workers, loads, config.run.process_ms,
                        args.splitters or source.splitters, source.by_partition,
                        config.simulate.batch_size)  # fmt: skip
    settings = AdviseSettings(config.run.workers if args.workers is None else args.workers,
                              config.run.load if args.load is None else args.load, grid,
                              config.advise.max_dist_cost)  # fmt: skip
    with ProgressReporter(len(choices) * len(workers), unit="routings",
                          label="simulating") as progress:  # fmt: skip
        advice = advise(source.tuples, choices, settings, source.tuples_per_s, progress.update_to)
    command = _command(args, advice.recommendation.pick.label, settings.workers, source.format)
    if args.json:
        print(json.dumps({"source": source.describe(), "command": command, **advice.to_dict()},
                         indent=2))  # fmt: skip
    else:
        print(source.heading())
        print(f"simulated {len(choices)} groupings x {len(workers)} W x {len(loads)} loads in "
              f"{advice.seconds:.1f} s\n")  # fmt: skip
        print(format_advice(advice, command))
    sys.stdout.flush()
    return 0
