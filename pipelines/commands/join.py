"""``dkg join``: the windowed stream-stream join, end to end on embedded defaults.

Starts a local broker unless ``--bootstrap-servers`` is given, produces the two
generated topics (once: topics that already hold the data are reused), runs the
partition-aware join until both are drained (with ``--stall-partition``: in two
phases, one right partition held back during the first), checks the result
against the generator's ground truth, and prints the statistics and where the
tables are. The same command started again resumes from its checkpoint.
"""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path
from typing import Any

from pipelines.commands.common import UsageError, add_config_options, config_from_args, format_table

__all__ = ["add_parser", "run"]

COLUMNS = ("lefts", "matched", "unmatched", "match_rate", "latency_p50_ms", "latency_p99_ms",
           "late_rights", "orphan_rights", "duplicates_removed", "missed", "false_unmatched",
           "wrong_pairs")  # fmt: skip


def add_parser(subparsers: Any) -> None:
    """Register ``join``."""
    parser = subparsers.add_parser(
        "join", help="the stream-stream join: two topics -> silver.joined -> gold.join_stats",
        description=__doc__, formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )  # fmt: skip
    parser.add_argument("--lefts", type=int, help="left records (default: conf join.lefts)")
    parser.add_argument("--match-ratio", type=float, help="share of lefts with a right partner")
    parser.add_argument("--partitions", type=int, help="partitions of each new topic")
    parser.add_argument("--window-ms", type=int, help="join window on creation time")
    parser.add_argument("--sync-delay-ms", type=int, help="expiry lag behind the slowest partition")
    parser.add_argument("--jump-max-ms", type=int, help="largest out-of-order jump")
    parser.add_argument("--stall-partition", type=int, help="hold back this right partition "
                        "for the first half of the run")  # fmt: skip
    parser.add_argument("--seed", type=int, help="generator seed")
    parser.add_argument("--topics", help="LEFT,RIGHT topic names (default: derived from the data)")
    parser.add_argument("--warehouse", type=Path, default=Path("lakehouse"), help="warehouse root")
    parser.add_argument("--master", help="Spark master URL (default local[2])")
    parser.add_argument("--bootstrap-servers", help="a Kafka to use (default: a local broker)")
    add_config_options(parser)
    parser.set_defaults(handler=run)


def _request(args: argparse.Namespace, bootstrap: str) -> Any:
    from pipelines.join_job import JoinRequest, data_spec
    from silver.join import JoinParams

    conf = config_from_args(args).join
    try:
        data = data_spec(conf, lefts=args.lefts, match_ratio=args.match_ratio,
                         partitions=args.partitions, jump_max_ms=args.jump_max_ms, seed=args.seed,
                         stall_partition=args.stall_partition)  # fmt: skip
        params = JoinParams(conf.window_ms if args.window_ms is None else args.window_ms,
                            conf.sync_delay_ms if args.sync_delay_ms is None else args.sync_delay_ms,
                            (data.partitions, data.partitions))  # fmt: skip
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    stall = "" if data.stall_partition is None else f"-stall{data.stall_partition}"
    base = (
        f"join-{data.lefts}-m{int(data.match_ratio * 100)}-j{data.jump_max_ms}-s{data.seed}{stall}"
    )
    topics = tuple(args.topics.split(",")) if args.topics else (f"{base}-left", f"{base}-right")
    if len(topics) != 2 or not all(topics):
        raise UsageError(f"--topics takes LEFT,RIGHT, got {args.topics!r}")
    return JoinRequest(data, topics, bootstrap, params, conf.shards, conf.max_offsets_per_trigger,
                       conf.stats_window_ms)  # fmt: skip


def run(args: argparse.Namespace) -> int:
    """Run the join and print its cumulative statistics."""
    from core.kafka.broker import LocalBroker
    from core.spark.session import build_spark
    from core.tables import DeltaRsBackend
    from core.warehouse import Warehouse
    from pipelines.join_job import ground_truth_check, run_join
    from pipelines.progress import ProgressReporter

    request = _request(args, "")  # a bad option fails before anything starts
    warehouse = Warehouse(args.warehouse)
    broker = None if args.bootstrap_servers else LocalBroker(warehouse.root / "_kafka")
    bootstrap = args.bootstrap_servers or broker.start()  # type: ignore[union-attr]
    try:
        request = dataclasses.replace(request, bootstrap=bootstrap)
        spark = build_spark(app_name="dkg-join", master=args.master or "local[2]")
        backend = DeltaRsBackend()
        with ProgressReporter(request.data.lefts * 2, unit="msg") as progress:
            result = run_join(spark, request, warehouse, backend, progress.update_to)
        check = ground_truth_check(backend, warehouse, result.run_id, request.data)
    finally:
        if broker is not None:
            broker.stop()
    row = {**result.summary, **check}
    pairs_per_s = row["matched"] / result.join_seconds if result.join_seconds else float("nan")
    print(f"{request.data.lefts:,} left records joined from {request.topics[0]} and "
          f"{request.topics[1]} (window {request.params.window_ms} ms, sync-delay "
          f"{request.params.sync_delay_ms} ms) in {result.join_seconds:.1f} s: "
          f"{pairs_per_s:,.0f} pairs/s")  # fmt: skip
    print(format_table([row], COLUMNS))
    example = "SELECT * FROM gold.join_stats"
    print(
        f"tables under {warehouse.root}/ (silver.joined, silver.join_rejects, silver.join_state, "
        f'gold.join_stats); query them with dkg sql "{example}" --warehouse {warehouse.root}'
    )
    return 0
