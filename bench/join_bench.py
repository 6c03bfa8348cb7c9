"""Benchmark of the partition-aware join: joined pairs/s and memory over a long run.

Feeds an endless generated stream (chunk after chunk, creation time moving on)
through the very functions the Spark job runs per micro-batch (shard tagging,
restore state bytes, join, snapshot state bytes), in this process, and reports
every ``--report-s`` seconds: pairs/s, process RSS and the join state's size.
Flat state and RSS over the run mean memory is bounded by the window.

    python -m bench.join_bench --seconds 600 --report-s 30

The end-to-end figure (Kafka -> Spark -> Delta) is what ``dkg join`` prints.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import time
from collections.abc import Iterator

import pandas as pd
import pyarrow.compute as pc

from bench.procfs import rss_mb
from bronze.join_data import JoinDataSpec, generate
from silver.join.engine import JoinParams
from silver.join.local import LocalJoin, generated_batches

__all__ = ["main", "stream"]

logger = logging.getLogger(__name__)

def stream(chunk_lefts: int, rate: float, partitions: int, batch: int) -> Iterator[pd.DataFrame]:
    """Micro-batches of an endless stream: chunk k starts where chunk k-1's creation time ended.

    Offsets restart with each chunk; the engine only uses them to order a
    batch, and no batch spans two chunks.
    """
    span_ms = int(chunk_lefts * 1000 / rate)
    chunk = 0
    while True:
        spec = JoinDataSpec(lefts=chunk_lefts, rate=rate, partitions=partitions, seed=chunk,
                            start_ms=1_700_000_000_000 + chunk * span_ms)  # fmt: skip
        records = generate(spec).records
        records = records[records["id"].notna()]  # no closing heartbeats: the stream goes on
        yield from generated_batches(records, batch)
        chunk += 1


def run(seconds: float, report_s: float, shards: int, batch: int, rate: float) -> list[dict]:
    """Join the stream for ``seconds`` of wall-clock time; one report row per ``report_s``."""
    params = JoinParams(window_ms=2_000, sync_delay_ms=500, partitions=(4, 4))
    join = LocalJoin(params, shards=shards)
    reports: list[dict] = []
    started = last = time.monotonic()
    cpu_started = time.process_time()
    pairs = pairs_since = records = 0
    for frame in stream(100_000, rate, 4, batch):
        out = join.process(frame)
        matched = int(pc.sum(pc.equal(out["record"], "matched")).as_py() or 0)
        pairs, pairs_since, records = pairs + matched, pairs_since + matched, records + len(frame)
        now = time.monotonic()
        if now - last >= report_s:
            state = out.filter(pc.equal(out["record"], "state"))
            reports.append({"elapsed_s": round(now - started, 1), "pairs": pairs,
                            "pairs_per_s": round(pairs_since / (now - last)),
                            "records_per_s": round(records / (now - started)),
                            # Pairs per CPU-second of this process: comparable on a shared machine.
                            "pairs_per_cpu_s": round(pairs / (time.process_time() - cpu_started)),
                            "rss_mb": round(rss_mb(os.getpid()), 1),
                            "state_mb": round(join.state_bytes() / 1e6, 2),
                            "pending": pc.sum(state["pending_left"]).as_py() + pc.sum(state["pending_right"]).as_py()})  # fmt: skip
            print(json.dumps(reports[-1]), flush=True)
            last, pairs_since = now, 0
        if now - started >= seconds:
            break
    return reports


def main() -> None:
    """Command line: ``--seconds``, ``--report-s``, ``--shards``, ``--batch``, ``--rate``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--report-s", type=float, default=10.0)
    parser.add_argument("--shards", type=int, default=2)
    parser.add_argument("--batch", type=int, default=50_000, help="records per micro-batch")
    parser.add_argument("--rate", type=float, default=20_000.0, help="left records per s of creation time")
    args = parser.parse_args()
    reports = run(args.seconds, args.report_s, args.shards, args.batch, args.rate)
    overall = reports[-1]["pairs"] / reports[-1]["elapsed_s"] if reports else 0.0
    rss = [r["rss_mb"] for r in reports]
    state = [r["state_mb"] for r in reports]
    print(json.dumps({"pairs_per_s": round(overall),
                      "pairs_per_cpu_s": reports[-1]["pairs_per_cpu_s"] if reports else 0,
                      "rss_mb_min": min(rss, default=0),
                      "rss_mb_max": max(rss, default=0), "state_mb_min": min(state, default=0),
                      "state_mb_max": max(state, default=0)}))  # fmt: skip


if __name__ == "__main__":
    main()
