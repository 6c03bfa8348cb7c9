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
grouping on speed. DYNAMIC_KEY's target: imbalance <= 2e-4 at dist_cost <= 1.15 with one
splitter, <= 5e-4 at <= 1.25 with four (several splitters each balance only their share).

``--input FILE`` adds a workload of your own string keys: a ``key,count,timestamp_ms``
CSV file as ``dkg simulate --input`` reads it, routed at ``--input-workers``
workers; only the speed target applies to it.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.config import load_settings
from pipelines.commands.common import format_table, positive_int

if TYPE_CHECKING:
    from bronze.datasets.base import TupleBatch

__all__ = ["MATRIX", "WORKLOADS", "Workload", "add_parser", "quality_target", "run"]


def quality_target(splitters: int) -> tuple[float, float]:
    """DYNAMIC_KEY's target with this many splitters: (largest imbalance, largest dist_cost)."""
    return (2e-4, 1.15) if splitters == 1 else (5e-4, 1.25)


@dataclass(frozen=True)
class Workload:
    """One bench workload and DYNAMIC_KEY's targets on it."""

    dataset: str
    workers: int
    zipf_exponent: float = 1.4
    splitters: int = 1
    max_imbalance: float | None = quality_target(1)[0]  # None: no target (a user's own keys)
    max_dist_cost: float = quality_target(1)[1]
    input: str | None = None  # a CSV file of keys instead of the dataset

    @property
    def label(self) -> str:
        """``ZIPF z=1.4``, ``WORDS_EN``, a file's path: the data, without W and splitters."""
        if self.input is not None:
            return self.input
        return f"{self.dataset} z={self.zipf_exponent}" if "ZIPF" in self.dataset else self.dataset

    def batches(self, messages: int) -> list[TupleBatch]:
        """The workload's tuples in batches of 10,000."""
        if self.input is not None:
            from bronze.datasets.csv_input import read_csv_tuples

            return list(read_csv_tuples(Path(self.input), batch_size=10_000))
        from bronze.datasets.base import DatasetSpec
        from bronze.datasets.registry import make_dataset

        spec = DatasetSpec(name=self.dataset, messages=messages, rate=2000.0, seed=7,
                           zipf_exponent=self.zipf_exponent, keys=10_000)  # fmt: skip
        return list(make_dataset(spec).tuples(batch_size=10_000))


_TARGETS = ", ".join(
    f"{n}{' splitter' if n == 1 else ''}: <= {imbalance:.0e}".replace("e-0", "e-") + f" at <= {cost:g}"
    for n in (1, 4) for imbalance, cost in [quality_target(n)]
)  # fmt: skip
"""The targets by splitter count, as the legend states them."""


def _workload(dataset: str, workers: int, exponent: float = 1.4, splitters: int = 1) -> Workload:
    return Workload(dataset, workers, exponent, splitters, *quality_target(splitters))


WORKLOADS = (
    _workload("ZIPF", 50, 1.4),
    _workload("ZIPF", 100, 2.0),
    _workload("ZIPF_SHIFTING", 50, 1.4),
    _workload("WORDS_EN", 50),
    _workload("WORDS_DE", 10),
    _workload("WORDS_FR", 100, splitters=4),
)
_SKEWS = (("ZIPF", 1.4), ("ZIPF", 2.0), ("ZIPF_SHIFTING", 1.4), ("ZIPF_SHIFTING", 2.0),
          *((name, 1.4) for name in ("WORDS_EN", "WORDS_DE", "WORDS_ES", "WORDS_FR",
                                     "WORDS_RU", "WORDS_JA")))  # fmt: skip
MATRIX = tuple(
    _workload(name, workers, exponent, splitters)
    for (name, exponent), workers, splitters in itertools.product(_SKEWS, (10, 50, 100), (1, 4))
)
GROUPINGS = (
    "SHUFFLE,KEY,PARTIAL_KEY,DYNAMIC_KEY,DYNAMIC_KEY(placement=least_loaded),"
    "DYNAMIC_KEY(placement=least_loaded,relief_share_factor=0),"
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
    parser.add_argument("--input", type=Path, metavar="FILE",
                        help="also route this CSV file (key,count,timestamp_ms)")  # fmt: skip
    parser.add_argument("--input-workers", type=positive_int, default=50,
                        help="workers W for --input")  # fmt: skip
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")
    parser.set_defaults(handler=run)


TARGET_MESSAGES = 1_000_000
"""The targets are set for this many messages a workload: fewer leave DYNAMIC_KEY's warm-up
(15 s of event time, 30,000 messages here) too large a share to judge its balance, and the
routing's per-call costs too large a share to judge its speed."""


def _verdict(row: dict[str, Any], workload: Workload, messages: int) -> str:
    if messages < TARGET_MESSAGES:
        return "n/a"
    problems = []
    if row["throughput"] < MIN_THROUGHPUT:
        problems.append("speed")
    judged = workload.max_imbalance is not None and row["grouping"] == "DYNAMIC_KEY"
    if judged and (
        row["imbalance"] > workload.max_imbalance or row["dist_cost"] > workload.max_dist_cost
    ):
        problems.append("quality")
    return "ok" if not problems else "MISSED " + "+".join(problems)


def _legend(workload: Workload, messages: int) -> str:
    splitters = f"{workload.splitters} splitter{'s' if workload.splitters > 1 else ''}"
    quality = (f"DYNAMIC_KEY's imbalance <= {workload.max_imbalance:g} at dist_cost <= "
               f"{workload.max_dist_cost:g} with {splitters} ({_TARGETS}); "
               if workload.max_imbalance is not None else "")  # fmt: skip
    judged = "" if messages >= TARGET_MESSAGES else f" (n/a: judged at {TARGET_MESSAGES:,} messages)"
    return (f"target{judged}: {quality}every grouping routes >= {MIN_THROUGHPUT:,} tuples/s; "
            "vs_key: throughput over KEY's")  # fmt: skip


def _rows(results: list[Any], workload: Workload, messages: int) -> list[dict[str, Any]]:
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
        row["target"] = _verdict(row, workload, messages)
        rows.append(row)
    return rows


def run(args: argparse.Namespace) -> int:
    """Run the workloads and print a table each."""
    # Here, not at the top: every dkg command builds this parser, and a mistake in its
    # options is answered before pandas and the routing kernels load.
    from pipelines.planning import queue_speed
    from pipelines.simulate import (
        SimulationSettings,
        parse_grouping_choices,
        simulate,
        tuples_per_second,
    )

    config = load_settings().settings
    choices = parse_grouping_choices(args.grouping, config.grouping_params)
    workloads = list(MATRIX if args.matrix else WORKLOADS)
    if args.input is not None:
        workloads.append(Workload("input", args.input_workers, max_imbalance=None,
                                  input=str(args.input)))  # fmt: skip
    report, data = [], {}
    for workload in workloads:
        source = (workload.dataset, workload.zipf_exponent, workload.input)
        if source not in data:
            data = {source: workload.batches(args.messages)}
        messages = sum(len(batch) for batch in data[source])
        settings = SimulationSettings(workers=workload.workers, splitters=workload.splitters,
                                      worker_window_ms=config.run.worker_window_ms,
                                      window_ms=config.run.aggregation_window_ms,
                                      process_ms=config.run.process_ms,
                                      speed=queue_speed(config.run, tuples_per_second(data[source]))[0])  # fmt: skip
        rows = _rows(simulate(data[source], choices, settings), workload, messages)
        report.append({"workload": {**asdict(workload), "messages": messages}, "rows": rows})
        if not args.json:
            print(f"\n{workload.label}, {messages:,} tuples, W={workload.workers}, "
                  f"{workload.splitters} splitter(s), batches of 10,000")  # fmt: skip
            print(format_table(rows, COLUMNS))
            print(_legend(workload, messages), flush=True)
    if args.json:
        print(json.dumps(report, indent=2))
    missed = [f"{entry['workload']['dataset']} W={entry['workload']['workers']}: {row['grouping']}"
              for entry in report for row in entry["rows"] if row["target"].startswith("MISSED")]  # fmt: skip
    if missed:
        print(f"dkg bench: {len(missed)} target(s) missed: {'; '.join(missed)}", file=sys.stderr)
    return 1 if missed else 0
