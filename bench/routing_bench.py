"""Routing speed per grouping on string keys read from CSV, beside generated keys.

Routes each workload through every grouping of ``dkg bench`` in-process, as
``dkg simulate`` does (one splitter, W workers, state serialized once per
10,000-tuple batch; only ``route()`` + ``snapshot()`` are timed), and prints
tuples/s per grouping. Workloads, 1,000,000 tuples each by default:

- ``zipf1.4 generated``: ZIPF z=1.4 over 10,000 keys, the generator's own key
  objects (``dkg bench``'s first workload);
- ``zipf1.4 csv``: the same tuples written to a CSV file and read back by
  ``dkg simulate --input``'s reader (a new ``str`` per row);
- ``zipf1.0 1M-keys csv``: ZIPF z=1.0 over 1,000,000 keys, ~217,000 distinct
  (about half of a batch's keys are new to it);
- ``wikipedia csv``: WIKIPEDIA_PAGEVIEWS page titles (~8,500 distinct, longer keys);
- ``--input FILE``: any ``key,count,timestamp_ms`` file of yours, as well.

Speed is tuples per second of the routing thread's CPU time (``--clock cpu``,
the default: ``time.thread_time`` stands in for ``dkg simulate``'s wall clock),
which is the per-core figure and does not count the time other processes on a
shared machine take the core away; ``--clock wall`` measures as ``dkg bench`` does.

With ``--baseline DIR`` (another checkout of the project) each round runs the
baseline's code and this tree's, alternately, in fresh processes on the same
files, and the table gives both medians and the median of the per-round ratios:
the machines here are shared, and only ratios measured side by side hold.

    python -m bench.routing_bench --baseline /path/to/other/checkout --rounds 3
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

__all__ = ["main"]

HERE = Path(__file__).resolve()
TREE = HERE.parent.parent
GENERATED = ("ZIPF", {"zipf_exponent": 1.4, "keys": 10_000})
CSV_WORKLOADS = {
    "zipf1.4 csv": ("ZIPF", {"zipf_exponent": 1.4, "keys": 10_000}),
    "zipf1.0 1M-keys csv": ("ZIPF", {"zipf_exponent": 1.0, "keys": 1_000_000}),
    "wikipedia csv": ("WIKIPEDIA_PAGEVIEWS", {}),
}


def _dataset(name: str, shape: dict[str, Any], messages: int) -> Iterator[Any]:
    from bronze.datasets.base import DatasetSpec
    from bronze.datasets.registry import make_dataset

    spec = DatasetSpec(name=name, messages=messages, rate=2000.0, seed=7, **shape)
    return make_dataset(spec).tuples(batch_size=10_000)


def write_csv(name: str, shape: dict[str, Any], messages: int, path: Path) -> None:
    """The first ``messages`` tuples of a generated dataset as ``key,count,timestamp_ms``."""
    written = 0
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["key", "count", "timestamp_ms"])
        for batch in _dataset(name, shape, messages):
            rows = zip(batch.keys.tolist(), batch.counts.tolist(),
                       batch.event_times_ms.tolist(), strict=True)  # fmt: skip
            for row in rows:
                if written == messages:
                    return
                writer.writerow(row)
                written += 1


def measure(files: dict[str, Path], messages: int, workers: int, groupings: str,
            clock: str = "cpu") -> dict:  # fmt: skip
    """Tuples/s per workload and grouping, in this process (the code on ``sys.path``)."""
    import time
    import types

    import pipelines.simulate as simulation
    from bronze.datasets.csv_input import read_csv_tuples
    from core.config import load_settings
    from pipelines.simulate import SimulationSettings, parse_grouping_choices, simulate

    if clock == "cpu":  # the simulator times route() + snapshot() with time.perf_counter
        simulation.time = types.SimpleNamespace(perf_counter=time.thread_time)  # type: ignore[attr-defined]

    choices = parse_grouping_choices(groupings, load_settings().settings.grouping_params)
    loads = {"zipf1.4 generated": lambda: list(_dataset(*GENERATED, messages))}
    for label, path in files.items():
        loads[label] = lambda path=path: list(read_csv_tuples(path, batch_size=10_000))
    report = {}
    for label, load in loads.items():
        results = simulate(load(), choices, SimulationSettings(workers=workers))
        report[label] = {r.choice.label: r.throughput for r in results}
    return report


def _child(tree: Path, files: dict[str, Path], args: argparse.Namespace) -> dict:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    command = [sys.executable, str(HERE), "--child", "--messages", str(args.messages),
               "--workers", str(args.workers), "--grouping", args.grouping, "--clock", args.clock,
               "--files", json.dumps({k: str(v) for k, v in files.items()})]  # fmt: skip
    out = subprocess.run(command, env=env, cwd=tree, check=True, capture_output=True, text=True)  # noqa: S603
    return json.loads(out.stdout.strip().splitlines()[-1])


def _table(runs: dict[str, list[dict]]) -> list[dict[str, Any]]:
    rows = []
    after = runs["after"]
    for workload, groupings in after[0].items():
        for grouping in groupings:
            speeds = [r[workload][grouping] for r in after]
            row = {"workload": workload, "grouping": grouping, "after": statistics.median(speeds)}
            if "before" in runs:
                before = [r[workload][grouping] for r in runs["before"]]
                row["before"] = statistics.median(before)
                row["ratio"] = statistics.median(a / b for a, b in zip(speeds, before, strict=True))
            rows.append(row)
    return rows


def _print(rows: list[dict[str, Any]]) -> None:
    columns = [c for c in ("workload", "grouping", "before", "after", "ratio") if c in rows[0]]
    print("  ".join(f"{c:>22}" for c in columns))
    for row in rows:
        cells = [f"{row[c] / 1e6:.2f} M/s" if c in ("before", "after") else
                 f"{row[c]:.2f}" if c == "ratio" else str(row[c]) for c in columns]  # fmt: skip
        print("  ".join(f"{cell:>22}" for cell in cells))


def main(argv: list[str] | None = None) -> int:
    """Write the CSV files, run the rounds and print the table (or JSON)."""
    from pipelines.commands.bench import GROUPINGS

    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    parser.add_argument("--messages", type=int, default=1_000_000, help="tuples per workload")
    parser.add_argument("--workers", type=int, default=50, help="workers W")
    parser.add_argument("--grouping", default=GROUPINGS, help="groupings, as in dkg bench")
    parser.add_argument("--input", type=Path, action="append", default=[],
                        help="a key,count,timestamp_ms CSV file to add (repeatable)")  # fmt: skip
    parser.add_argument("--baseline", type=Path, help="another checkout to compare against")
    parser.add_argument("--rounds", type=int, default=3, help="rounds (each runs both trees)")
    parser.add_argument("--clock", choices=("cpu", "wall"), default="cpu",
                        help="time routing by the thread's CPU time or by the wall clock")  # fmt: skip
    parser.add_argument("--json", action="store_true", help="print every round as JSON")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--files", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        files = {k: Path(v) for k, v in json.loads(args.files).items()}
        report = measure(files, args.messages, args.workers, args.grouping, args.clock)
        print(json.dumps(report))
        return 0
    with tempfile.TemporaryDirectory(prefix="routing-bench-") as scratch:
        files = {path.name: path for path in args.input}
        for label, (name, shape) in CSV_WORKLOADS.items():
            files[label] = Path(scratch) / (label.replace(" ", "_") + ".csv")
            write_csv(name, shape, args.messages, files[label])
        runs: dict[str, list[dict]] = {"after": []}
        if args.baseline is not None:
            runs["before"] = []
        for _ in range(args.rounds):
            if args.baseline is not None:
                runs["before"].append(_child(args.baseline.resolve(), files, args))
            runs["after"].append(_child(TREE, files, args))
    if args.json:
        print(json.dumps(runs, indent=2))
    else:
        _print(_table(runs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
