"""Silver's routing step in process: one splitter group's bronze blocks parsed, routed and packed.

Runs :func:`silver.routing.route_blocks_with_state`, the function Spark's
``applyInPandasWithState`` calls in every routing task, on the blocks a read task
hands it: ZIPF messages (z=1.4, 10,000 keys) of two Kafka partitions, packed per
50,000 rows as the read tasks pack them, each partition's splitter routed in its
own call, as one task of a 2-core run routes its share (500,000 messages of a 1 M
micro-batch). Timed by the thread's CPU
(the per-core figure, whatever else the machine runs); each round starts from
empty state. The silver tables' rows are packed, not landed as Parquet files
(landing needs a task of a streaming micro-batch for its file names).

    python -m bench.routing_step_bench [--messages 500000] [--grouping DYNAMIC_KEY] [--rounds 5]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from bench.console import configure_logging, publish
from bronze.datasets.base import DatasetSpec
from bronze.datasets.registry import make_dataset
from silver.blocks import BLOCK_ROWS, bronze_blocks
from silver.routing import Routing, route_blocks_with_state

__all__ = ["main"]

_PARTITIONS = 2
_WORKERS = 10


class _State:
    """The state handle ``applyInPandasWithState`` passes: empty, then what the step stored."""

    def __init__(self) -> None:
        self.exists, self.get = False, None

    def update(self, value: tuple[Any, ...]) -> None:
        self.exists, self.get = True, value


def _blocks(messages: int) -> list[pd.DataFrame]:
    """Each splitter's blocks."""
    spec = DatasetSpec(name="ZIPF", messages=messages, rate=50_000.0, seed=7,
                       zipf_exponent=1.4, keys=10_000)  # fmt: skip
    batches = list(make_dataset(spec).messages(BLOCK_ROWS))
    stamps = np.concatenate([b.timestamps_ms for b in batches])
    partitions = np.arange(messages) % _PARTITIONS
    raw = pa.table({
        "run_id": pa.array(["bench"] * messages), "partition": pa.array(partitions, pa.int32()),
        "offset": pa.array(np.arange(messages) // _PARTITIONS, pa.int64()),
        "timestamp": pa.array(stamps, pa.timestamp("ms", tz="UTC")).cast(pa.timestamp("us", tz="UTC")),
        "value": pa.array([p for b in batches for p in b.payloads], pa.binary()),
    })  # fmt: skip
    splitters = []
    for partition in range(_PARTITIONS):
        rows = raw.filter(pa.array(partitions == partition))
        blocks = [bronze_blocks(rows.slice(first, BLOCK_ROWS), _PARTITIONS, range(_PARTITIONS))
                  for first in range(0, rows.num_rows, BLOCK_ROWS)]  # fmt: skip
        splitters.append(pa.Table.from_batches(blocks).to_pandas())
    return splitters


def main() -> None:
    """Command line: ``--messages``, ``--grouping``, ``--rounds``, ``--output``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=500_000)
    parser.add_argument("--grouping", default="DYNAMIC_KEY")
    parser.add_argument("--rounds", type=int, default=5, help="the first one warms up, untimed")
    parser.add_argument("--output", type=Path, default=Path("bench/results/routing_step.json"))
    args = parser.parse_args()
    configure_logging()
    splitters = _blocks(args.messages)
    routing = Routing("ZIPF", _PARTITIONS, args.grouping, _WORKERS)
    seconds = []
    for _ in range(args.rounds):
        started = time.thread_time()
        out = pd.concat([frame for number, blocks in enumerate(splitters)
                         for frame in route_blocks_with_state((number,), iter([blocks]), _State(),
                                                              routing, list(range(_WORKERS)), None)])  # fmt: skip
        seconds.append(time.thread_time() - started)
    tuples = int(out.loc[out["kind"] == "tuples", "rows"].sum())
    if tuples != args.messages:
        raise SystemExit(f"the step routed {tuples:,} tuples of {args.messages:,} messages")
    median = statistics.median(seconds[1:] or seconds)
    publish({"messages": args.messages, "grouping": args.grouping,
             "cpu_s": [round(s, 3) for s in seconds], "median_cpu_s": round(median, 3),
             "msg_per_cpu_s": round(args.messages / median)}, args.output)  # fmt: skip


if __name__ == "__main__":
    main()
