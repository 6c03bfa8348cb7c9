"""``dkg join``: the windowed stream-stream join, end to end on embedded defaults.

By default it produces two generated topics into the embedded broker (once:
topics that already hold the data are reused), runs the partition-aware join
until both are drained (with ``--stall-partition``: in two phases, one right
partition held back during the first), checks the result against the
generator's ground truth, and prints the statistics and where the tables are.
With ``--topics LEFT,RIGHT`` it joins those topics as they are (on your Kafka
with ``--bootstrap-servers``), up to their end offsets at start, with no
ground-truth check. The same command started again resumes from its checkpoint.
"""

from __future__ import annotations

import argparse
import dataclasses
from typing import Any

from core.config import Settings
from core.logs import figure
from pipelines.commands.common import (
    UsageError,
    add_config_options,
    load_from_args,
    non_negative_int,
    positive_int,
    topic_name,
)

__all__ = ["add_parser", "run", "statistics_lines"]

COLUMNS = ("lefts", "matched", "unmatched", "match_rate", "latency_p50_ms", "latency_p99_ms",
           "late_rights", "orphan_rights", "duplicates_removed", "missed", "false_unmatched",
           "wrong_pairs")  # fmt: skip


JOIN_OPTIONS = {"lefts": "join.lefts", "match_ratio": "join.match_ratio",
                "partitions": "join.partitions", "window_ms": "join.window_ms",
                "sync_delay_ms": "join.sync_delay_ms", "jump_max_ms": "join.jump_max_ms",
                "seed": "join.seed", "warehouse": "warehouse.uri", "master": "spark.master",
                "bootstrap_servers": "kafka.bootstrap_servers"}  # fmt: skip


def add_parser(subparsers: Any) -> None:
    """Register ``join``."""
    parser = subparsers.add_parser(
        "join", help="the stream-stream join: two topics -> silver.joined -> gold.join_stats",
        description=__doc__,
    )  # fmt: skip
    parser.add_argument("--lefts", type=positive_int, help="left records (join.lefts)")
    parser.add_argument("--match-ratio", type=float, help="share of lefts with a right partner")
    parser.add_argument("--partitions", type=positive_int, help="partitions of each new topic")
    parser.add_argument("--window-ms", type=non_negative_int, help="join window on creation time")
    parser.add_argument("--sync-delay-ms", type=non_negative_int,
                        help="expiry lag behind the slowest partition")  # fmt: skip
    parser.add_argument("--jump-max-ms", type=non_negative_int, help="largest out-of-order jump")
    parser.add_argument("--stall-partition", type=non_negative_int,
                        help="hold back this right partition for the first half of the run")  # fmt: skip
    parser.add_argument("--seed", type=int, help="generator seed")
    parser.add_argument("--topics", help="LEFT,RIGHT: join these topics as they are (records "
                        "{\"id\": ..., \"created_ms\": ...}; default: generated topics)")  # fmt: skip
    parser.add_argument("--warehouse", help="warehouse root: a path or s3://bucket/prefix")
    parser.add_argument("--master", help="Spark master URL (spark.master)")
    parser.add_argument("--bootstrap-servers", help="your Kafka (default: the embedded broker)")
    add_config_options(parser)
    parser.set_defaults(handler=run)


def _given_topics(text: str) -> tuple[str, str]:
    topics = tuple(t.strip() for t in text.split(","))
    if len(topics) != 2 or not all(topics):
        raise UsageError(f"--topics takes LEFT,RIGHT, got {text!r}")
    for topic in topics:
        try:
            topic_name(topic)
        except argparse.ArgumentTypeError as exc:
            raise UsageError(f"--topics: {exc}") from None
    return topics  # type: ignore[return-value]


def _request(args: argparse.Namespace, settings: Settings) -> Any:
    from pipelines.join_pipeline import JoinRequest, data_spec, generated_topics
    from silver.join import JoinParams

    conf = settings.join
    if args.topics:
        topics, data = _given_topics(args.topics), None
    else:
        try:
            data = data_spec(conf, stall_partition=args.stall_partition)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        topics = generated_topics(data)
    return JoinRequest(data, topics, None, JoinParams(conf.window_ms, conf.sync_delay_ms, (1, 1)),
                       conf.shards, conf.max_offsets_per_trigger, conf.stats_window_ms)  # fmt: skip


def _partitions(request: Any) -> tuple[int, int]:
    from core.kafka.admin import BrokerError, end_offsets, topic_exists

    if request.data is not None:
        return request.data.partitions, request.data.partitions
    for topic in request.topics:
        if not topic_exists(request.client, topic):
            raise BrokerError(f"topic {topic!r} does not exist on {request.client.bootstrap}")
    left, right = (len(end_offsets(request.client, t)) for t in request.topics)
    return left, right


def statistics_lines(statistics: dict[str, Any]) -> str:
    """One statistic a line, names (gold.join_stats' columns) left, values right-aligned."""
    values = {name: figure(value) for name, value in statistics.items()}
    name_width, value_width = max(map(len, values)), max(map(len, values.values()))
    return "\n".join(f"  {name:<{name_width}}  {value:>{value_width}}"
                     for name, value in values.items())  # fmt: skip


def run(args: argparse.Namespace) -> int:
    """Run the join and print its cumulative statistics."""
    from pipelines.join_pipeline import ground_truth_check, run_join
    from pipelines.pipeline_runtime import open_runtime
    from pipelines.stream_progress import stage_progress

    loaded = load_from_args(args, JOIN_OPTIONS)
    request = _request(args, loaded.settings)  # a bad option fails before anything starts
    with open_runtime(loaded, app_name="dkg-join") as runtime:
        warehouse = runtime.warehouse
        request = dataclasses.replace(request, client=runtime.kafka)
        try:
            params = dataclasses.replace(request.params, partitions=_partitions(request))
            request = dataclasses.replace(request, params=params)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        spark, backend = runtime.spark, runtime.backend
        with stage_progress(spark, lag_queries=()):  # each drain's and gold's display
            result = run_join(spark, request, warehouse, backend)
        check = ({} if request.data is None else
                 ground_truth_check(backend, warehouse, result.run_id, request.data))  # fmt: skip
    row = {**result.summary, **check}
    pairs_per_s = row["matched"] / result.join_seconds if result.join_seconds else float("nan")
    print(f"{row['lefts']:,} left records joined from {request.topics[0]} and "
          f"{request.topics[1]} (window {request.params.window_ms} ms, sync-delay "
          f"{request.params.sync_delay_ms} ms) in {result.join_seconds:.1f} s: "
          f"{pairs_per_s:,.0f} pairs/s")  # fmt: skip
    print(statistics_lines({c: row[c] for c in COLUMNS if c in row}))
    example = "SELECT * FROM gold.join_stats"
    print(
        f"tables under {warehouse.root}/ (silver.joined, silver.join_rejects, silver.join_state, "
        f'gold.join_stats); query them with dkg sql "{example}" --warehouse {warehouse.root}'
    )
    return 0
