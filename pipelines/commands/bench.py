"""``dkg bench``: the grouping engine's quality and speed on the reference workloads.

Every workload routes 1,000,000 messages (10,000 keys, 2,000 msg/s of event
time, seed 7), state serialized once per 10,000-tuple batch. The default set:
ZIPF z=1.4 at W=50 and z=2.0 at W=100, ZIPF_SHIFTING (hot set moves every 60 s),
and word streams drawn from real frequencies (WORDS_EN, WORDS_DE, WORDS_FR),
whose flat heads put many keys near 1/W. ``--matrix`` runs every skew dataset
at W = 10, 50 and 100 with 1 and 4 splitters. Speed is reported as tuples/s and
as a ratio to KEY's throughput measured in the same run (machines here are
shared and noisy, so ratios are what compare across runs). The target column
judges DYNAMIC_KEY (the default rule) on balance and replication, and every
grouping on speed.
"""

from __future__ import annotations

import argparse
import itertools
import json
from dataclasses import asdict, dataclass
from typing import Any

from bronze.datasets.base import DatasetSpec
from bronze.datasets.registry import make_dataset
from core.config import load_settings
from pipelines.commands.common import format_table, positive_int
from pipelines.simulate import SimulationSettings, parse_grouping_choices, simulate

__all__ = ["MATRIX", "WORKLOADS", "Workload", "add_parser", "run"]


@dataclass(frozen=True)
class Workload:
    """One bench workload and DYNAMIC_KEY's targets on it."""

    dataset: str
    workers: int
    zipf_exponent: float = 1.4
    splitters: int = 1
    max_imbalance: float = 1e-3
    max_dist_cost: float = 1.3

    @property
    def label(self) -> str:
        """``ZIPF z=1.4``, ``WORDS_EN``, ...: the data, without W and splitters."""
        return f"{self.dataset} z={self.zipf_exponent}" if "ZIPF" in self.dataset else self.dataset


WORKLOADS = (
    Workload("ZIPF", 50, 1.4, max_dist_cost=1.2),
    Workload("ZIPF", 100, 2.0),
    Workload("ZIPF_SHIFTING", 50, 1.4),
    Workload("WORDS_EN", 50),
    Workload("WORDS_DE", 10),
    Workload("WORDS_FR", 100, splitters=4),
)
_SKEWS = (("ZIPF", 1.4), ("ZIPF", 2.0), ("ZIPF_SHIFTING", 1.4), ("ZIPF_SHIFTING", 2.0),
          *((name, 1.4) for name in ("WORDS_EN", "WORDS_DE", "WORDS_ES", "WORDS_FR",
                                     "WORDS_RU", "WORDS_JA")))  # fmt: skip
MATRIX = tuple(
    Workload(name, workers, exponent, splitters)
    for (name, exponent), workers, splitters in itertools.product(_SKEWS, (10, 50, 100), (1, 4))
)
GROUPINGS = (
    "SHUFFLE,KEY,PARTIAL_KEY,DYNAMIC_KEY,DYNAMIC_KEY(relief_share_factor=0),"
    "DYNAMIC_KEY(mode=seed),CONSISTENT_HASH(strategy=halving),"
    "CONSISTENT_HASH(strategy=doubling),SMALOPS,W_CHOICES"
)
MIN_THROUGHPUT = 2_000_000
COLUMNS = ("grouping", "imbalance", "dist_cost", "stddev_pct", "p99_ms", "throughput",
           "vs_key", "target")  # fmt: skip


def add_parser(subparsers: Any) -> None:
    """Register ``bench``."""
    parser = subparsers.add_parser(
        "bench", help="measure every grouping's balance, replication and routing speed",
        description=__doc__,
    )  # fmt: skip
    parser.add_argument(
        "--messages", type=positive_int, default=1_000_000, help="messages per workload"
    )
    parser.add_argument("--grouping", default=GROUPINGS, metavar="GROUPINGS",
                        help="groupings to measure, a comma list (default: every grouping, "
                        "DYNAMIC_KEY and CONSISTENT_HASH in several settings)")  # fmt: skip
    parser.add_argument(
        "--matrix", action="store_true",
        help="every skew dataset at W=10, 50, 100 with 1 and 4 splitters",
    )  # fmt: skip
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")
    parser.set_defaults(handler=run)


def _verdict(row: dict[str, Any], workload: Workload) -> str:
    problems = []
    if row["throughput"] < MIN_THROUGHPUT:
        problems.append("speed")
    if row["grouping"] == "DYNAMIC_KEY" and (
        row["imbalance"] > workload.max_imbalance or row["dist_cost"] > workload.max_dist_cost
    ):
        problems.append("quality")
    return "ok" if not problems else "MISSED " + "+".join(problems)


def _rows(results: list[Any], workload: Workload) -> list[dict[str, Any]]:
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
    return rows


def run(args: argparse.Namespace) -> int:
    """Run the workloads and print a table each."""
    config = load_settings().settings
    choices = parse_grouping_choices(args.grouping, config.grouping_params)
    report, data = [], {}
    for workload in MATRIX if args.matrix else WORKLOADS:
        source = (workload.dataset, workload.zipf_exponent)
        if source not in data:
            spec = DatasetSpec(name=workload.dataset, messages=args.messages, rate=2000.0, seed=7,
                               zipf_exponent=workload.zipf_exponent, keys=10_000)  # fmt: skip
            data = {source: list(make_dataset(spec).tuples(batch_size=10_000))}
        settings = SimulationSettings(workers=workload.workers, splitters=workload.splitters)
        rows = _rows(simulate(data[source], choices, settings), workload)
        report.append({"workload": {**asdict(workload), "messages": args.messages}, "rows": rows})
        if not args.json:
            print(f"\n{workload.label}, 10,000 keys, {args.messages:,} messages, "
                  f"W={workload.workers}, {workload.splitters} splitter(s), batches of 10,000")  # fmt: skip
            print(format_table(rows, COLUMNS), flush=True)
    if args.json:
        print(json.dumps(report, indent=2))
    return 0
