"""``dkg simulate``: compare groupings on one dataset, in-process, no Spark."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.config import Settings
from pipelines.commands.common import (
    UsageError,
    add_config_options,
    add_queue_options,
    load_from_args,
    positive_float,
    positive_int,
)

if TYPE_CHECKING:
    from bronze.datasets.base import DatasetSpec, TupleBatch
    from pipelines.simulate import SimulationResult

__all__ = [
    "DATASET_OPTIONS",
    "add_dataset_options",
    "add_parser",
    "dataset_spec",
    "load_tuples",
    "result_rows",
    "run",
]

def add_parser(subparsers: Any) -> None:
    """Register ``simulate``."""
    parser = subparsers.add_parser(
        "simulate",
        help="route a dataset through groupings in-process and print their metrics",
        description="Route a dataset through one or more groupings (no Spark, no Kafka) "
        "and print one row of metrics per grouping. Unset options come from the configuration (dkg config show).",
    )
    add_dataset_options(parser)
    parser.add_argument("--grouping", default="all",
                        help="'all', or a comma list; a name may carry parameters, "
                        "e.g. DYNAMIC_KEY(mode=seed),DYNAMIC_KEY")  # fmt: skip
    parser.add_argument("--workers", type=positive_int, help="number of workers W")
    parser.add_argument(
        "--splitters", type=positive_int, help="routing instances, tuples dealt round-robin"
    )
    parser.add_argument("--dkg-mode", choices=("seed", "adaptive"),
                        help="DYNAMIC_KEY rule: seed 000's as written, or adaptive")  # fmt: skip
    parser.add_argument(
        "--window-ms", type=positive_int, help="per-window metrics window (event time)"
    )
    add_queue_options(parser, speed_help="instead of --load: event time runs this many times "
                      "faster than real time in the queue model", work=False)  # fmt: skip
    parser.add_argument("--batch-size", type=positive_int, help="tuples per route() call")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    add_config_options(parser)
    parser.set_defaults(handler=run)


def add_dataset_options(parser: argparse.ArgumentParser) -> None:
    """Options that choose and shape the dataset (or a CSV file of yours instead)."""
    what = parser.add_mutually_exclusive_group()
    what.add_argument("--dataset", help="dataset name, e.g. ZIPF, COUNTRY_SKEW_R80 (dataset.name)")
    what.add_argument("--input", type=Path, metavar="FILE",
                      help="CSV key,count,timestamp_ms (header optional) instead of a dataset")  # fmt: skip
    parser.add_argument("--messages", type=positive_int, help="messages to generate")
    parser.add_argument("--rate", type=positive_float, help="messages per second of event time")
    parser.add_argument("--seed", type=int, help="random seed of the generator")
    parser.add_argument("--zipf-exponent", type=positive_float, help="ZIPF exponent")
    parser.add_argument("--keys", type=positive_int, help="key universe size for ZIPF datasets")
    parser.add_argument(
        "--shift-interval", type=positive_float, help="ZIPF_SHIFTING interval, seconds"
    )


DATASET_OPTIONS = {"dataset": "dataset.name", "messages": "dataset.messages",
                   "rate": "dataset.rate", "seed": "dataset.seed",
                   "zipf_exponent": "dataset.zipf_exponent", "keys": "dataset.keys",
                   "shift_interval": "dataset.shift_interval_s"}  # fmt: skip
"""The dataset options' settings (:func:`add_dataset_options`)."""

SIMULATE_OPTIONS = {**DATASET_OPTIONS, "workers": "run.workers",
                    "splitters": "simulate.splitters", "window_ms": "run.aggregation_window_ms",
                    "process_ms": "run.process_ms", "speed": "run.speed", "load": "run.load",
                    "batch_size": "simulate.batch_size",
                    "dkg_mode": "groupings.DYNAMIC_KEY.mode"}  # fmt: skip


def dataset_spec(settings: Settings) -> DatasetSpec:
    """The dataset the settings describe."""
    from bronze.datasets.base import DatasetSpec

    data = settings.dataset
    return DatasetSpec(name=data.name, messages=data.messages, rate=data.rate, seed=data.seed,
                       zipf_exponent=data.zipf_exponent, keys=data.keys,
                       shift_interval_s=data.shift_interval_s)  # fmt: skip


def load_tuples(input_csv: Path | None, settings: Settings) -> list[TupleBatch]:
    """The tuples to route: from a CSV file or a generated dataset."""
    batch_size = settings.simulate.batch_size
    if input_csv is not None:
        from bronze.datasets.csv_input import read_csv_tuples

        return list(read_csv_tuples(input_csv, batch_size=batch_size))
    from bronze.datasets.registry import make_dataset

    return list(make_dataset(dataset_spec(settings)).tuples(batch_size=batch_size))


def result_rows(results: list[SimulationResult]) -> list[dict[str, Any]]:
    """One flat row per grouping: the table columns, then the rest of the metrics."""
    rows = []
    for result in results:
        metrics = result.metrics.cumulative.to_dict()
        metrics.pop("loads", None)
        row = {"grouping": result.choice.label, **metrics}
        row["throughput"] = result.throughput
        row["hot_keys"] = len(result.hot_keys)
        rows.append(row)
    return rows


def run(args: argparse.Namespace) -> int:
    """Run the simulation and print the table (or JSON)."""
    # Here, not at the top: every dkg command builds this parser, and a mistake in its
    # options is answered before pandas and the routing kernels load.
    from pipelines.commands.comparison import QueueSetting, format_comparison
    from pipelines.planning import queue_speed
    from pipelines.simulate import (
        SimulationSettings,
        parse_grouping_choices,
        simulate,
        tuples_per_second,
    )

    config = load_from_args(args, SIMULATE_OPTIONS).settings
    choices = parse_grouping_choices(args.grouping, config.grouping_params)
    batches = load_tuples(args.input, config)
    total = sum(len(b) for b in batches)
    if total == 0:
        raise UsageError("the input has no tuples")
    speed, load = queue_speed(config.run, tuples_per_second(batches))
    settings = SimulationSettings(
        workers=config.run.workers,
        splitters=config.simulate.splitters,
        worker_window_ms=config.run.worker_window_ms,
        window_ms=config.run.aggregation_window_ms,
        process_ms=config.run.process_ms,
        speed=speed,
    )
    from pipelines.progress import ProgressReporter

    with ProgressReporter(total * len(choices), unit="tuples") as progress:
        done: dict[str, int] = {}

        def report(label: str, routed: int) -> None:
            done[label] = routed
            progress.update_to(sum(done.values()), label)

        results = simulate(batches, choices, settings, report)
    rows = result_rows(results)
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        print(f"{total:,} tuples, W={settings.workers}, {settings.splitters} splitter(s), tuples "
              "dealt round-robin (dkg run: one splitter per Kafka partition, a key's tuples "
              "all to its partition's, so its figures differ a little)")  # fmt: skip
        print(format_comparison(rows, QueueSetting(settings.workers, settings.process_ms, load)))
    sys.stdout.flush()
    return 0
