"""``dkg bench``: the grouping engine's quality and speed on the reference workloads.

Workloads (one splitter, state serialized once per 10,000-tuple batch):
ZIPF z=1.4 and z=2.0 over 10,000 keys, 1,000,000 messages at 2,000 msg/s of
event time, W=50 and W=100. Speed is reported as tuples/s and as a ratio to
KEY's throughput measured in the same run (machines here are shared and noisy,
so ratios are what compare across runs).

``--input FILE`` adds a workload of your own string keys: a ``key,count,timestamp_ms``
CSV file as ``dkg simulate --input`` reads it, routed at ``--input-workers``
workers; only the speed target applies to it.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from bronze.datasets.base import DatasetSpec, TupleBatch
from bronze.datasets.registry import make_dataset
from core.config import load_settings
from pipelines.commands.common import format_table, positive_int
from pipelines.simulate import SimulationSettings, parse_grouping_choices, simulate

__all__ = ["WORKLOADS", "add_parser", "run"]

WORKLOADS = (
    {"zipf_exponent": 1.4, "workers": 50, "max_imbalance": 1e-3, "max_dist_cost": 1.2},
    {"zipf_exponent": 2.0, "workers": 100, "max_imbalance": 1e-3, "max_dist_cost": 1.3},
)
GROUPINGS = (
    "SHUFFLE,KEY,PARTIAL_KEY,DYNAMIC_KEY,DYNAMIC_KEY(mode=seed),"
    "CONSISTENT_HASH(strategy=halving),CONSISTENT_HASH(strategy=doubling),SMALOPS,W_CHOICES"
)
MIN_THROUGHPUT = 2_000_000
COLUMNS = ("grouping", "imbalance", "dist_cost", "stddev_pct", "p99_ms", "throughput",
           "vs_key", "target")  # fmt: skip


def add_parser(subparsers: Any) -> None:
    """Register ``bench``."""
    parser = subparsers.add_parser(
        "bench", help="measure every grouping's balance, replication and routing speed",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
    )  # fmt: skip
    parser.add_argument(
        "--messages", type=positive_int, default=1_000_000, help="messages per workload"
    )
    parser.add_argument("--grouping", default=GROUPINGS, help="groupings to measure")
    parser.add_argument("--input", type=Path, metavar="FILE",
                        help="also route this CSV file (key,count,timestamp_ms)")  # fmt: skip
    parser.add_argument("--input-workers", type=positive_int, default=50,
                        help="workers W for --input")  # fmt: skip
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")
    parser.set_defaults(handler=run)


def _verdict(row: dict[str, Any], workload: dict[str, Any]) -> str:
    problems = []
    if row["throughput"] < MIN_THROUGHPUT:
        problems.append("speed")
    quality = workload.get("max_imbalance") is not None and row["grouping"] == "DYNAMIC_KEY"
    if quality and (
        row["imbalance"] > workload["max_imbalance"] or row["dist_cost"] > workload["max_dist_cost"]
    ):
        problems.append("quality")
    return "ok" if not problems else "MISSED " + "+".join(problems)


def _workloads(args: argparse.Namespace) -> list[tuple[dict[str, Any], list[TupleBatch], str]]:
    workloads = []
    for workload in WORKLOADS:
        spec = DatasetSpec(name="ZIPF", messages=args.messages, rate=2000.0, seed=7,
                           zipf_exponent=workload["zipf_exponent"], keys=10_000)  # fmt: skip
        title = (f"ZIPF z={workload['zipf_exponent']}, 10,000 keys, {args.messages:,} messages, "
                 f"W={workload['workers']}, 1 splitter, batches of 10,000")  # fmt: skip
        batches = list(make_dataset(spec).tuples(batch_size=10_000))
        workloads.append(({**workload, "messages": args.messages}, batches, title))
    if args.input is not None:
        from bronze.datasets.csv_input import read_csv_tuples

        batches = list(read_csv_tuples(args.input, batch_size=10_000))
        tuples = sum(len(b) for b in batches)
        title = (f"{args.input} ({tuples:,} tuples), W={args.input_workers}, 1 splitter, "
                 "batches of 10,000")  # fmt: skip
        workload = {"input": str(args.input), "workers": args.input_workers, "messages": tuples}
        workloads.append((workload, batches, title))
    return workloads


def run(args: argparse.Namespace) -> int:
    """Run the workloads and print a table each."""
    config = load_settings().settings
    choices = parse_grouping_choices(args.grouping, config.grouping_params)
    report = []
    for workload, batches, title in _workloads(args):
        results = simulate(batches, choices, SimulationSettings(workers=workload["workers"]))
        key_speed = next((r.throughput for r in results if r.choice.label == "KEY"), float("nan"))
        rows = []
        for result in results:
            cumulative = result.metrics.cumulative.to_dict()
            row = {
                "grouping": result.choice.label,
                **{c: cumulative[c] for c in ("imbalance", "dist_cost", "stddev_pct", "p99_ms")},
                "throughput": result.throughput,
                "vs_key": result.throughput / key_speed,
            }
            row["target"] = _verdict(row, workload)
            rows.append(row)
        report.append({"workload": workload, "rows": rows})
        if not args.json:
            print(f"\n{title}")
            print(format_table(rows, COLUMNS))
    if args.json:
        print(json.dumps(report, indent=2))
    return 0
