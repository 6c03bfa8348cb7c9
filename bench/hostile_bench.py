"""Hostile mix at speed: a clean drain against one with malformed messages mixed in.

Both drains run in one process, on one broker and one Spark session, with the
same number of messages: ``clean`` is ``--messages`` of ZIPF; ``hostile`` is the
same ZIPF stream cut short by ``--malformed-fraction`` of the messages, with that
many malformed messages of every kind mixed in (``bronze.datasets.malformed``).
Each drain is timed as ``bench/pipeline_bench.py``'s drain times it (Kafka to
gold, the broker idle before the clock starts), after an untimed warm-up drain.
Rounds alternate the order (clean first, then hostile first) so drift falls on
both sides. On a shared machine, compare the CPU-seconds of the pipeline's own
processes (``cpu_s``) rather than the wall time.

Checked against the generator's own counts, not the pipeline's: every malformed
message sits in ``silver.quarantine`` with its kind's reason, and ``gold.key_counts``
holds exactly the clean messages' counts per key.

Usage: ``PYTHONPATH=. python -m bench.hostile_bench [--messages 1000000]
[--malformed-fraction 0.01] [--rounds 1]``
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.compute as pc

from bench.console import configure_logging, publish
from bench.pipeline_bench import drain
from bronze.datasets.base import Dataset, DatasetSpec
from bronze.datasets.malformed import MalformedMix
from bronze.datasets.registry import make_dataset
from core.config import load_settings
from core.kafka.broker import LocalBroker
from core.kafka.client import KafkaClient
from core.spark.session import build_spark
from core.tables import DeltaRsBackend
from core.warehouse import Warehouse
from gold.schemas import KEY_COUNTS
from pipelines.pipeline_runtime import WORKER_DAEMON
from silver.schemas import QUARANTINE

__all__ = ["expected_key_counts", "main", "quarantine_reasons"]


def expected_key_counts(dataset: Dataset) -> dict[str, int]:
    """Sum of counts per key over the dataset's tuples (what gold must hold)."""
    totals: Counter[str] = Counter()
    for batch in dataset.tuples(batch_size=100_000):
        keys, inverse = np.unique(batch.keys.astype(str), return_inverse=True)
        for key, count in zip(
            keys.tolist(), np.bincount(inverse, batch.counts).tolist(), strict=True
        ):
            totals[key] += int(count)
    return dict(totals)


def quarantine_reasons(warehouse: Warehouse, run_id: str) -> dict[str, int]:
    """``silver.quarantine`` rows of a run per reason."""
    table = DeltaRsBackend().read(warehouse.table_uri(*QUARANTINE))
    table = table.filter(pc.equal(table["run_id"], run_id))
    return {r["values"]: r["counts"] for r in pc.value_counts(table["error"]).to_pylist()}


def _gold_key_counts(warehouse: Warehouse, run_id: str) -> dict[str, int]:
    table = DeltaRsBackend().read(warehouse.table_uri(*KEY_COUNTS))
    table = table.filter(pc.equal(table["run_id"], run_id))
    summed = table.group_by("key").aggregate([("count", "sum")]).to_pylist()
    return {r["key"]: r["count_sum"] for r in summed}


def _datasets(args: argparse.Namespace, start_ms: int) -> dict[str, Dataset]:
    malformed = round(args.messages * args.malformed_fraction)
    spec = DatasetSpec(name="ZIPF", messages=args.messages, start_ms=start_ms)
    cut = make_dataset(spec.model_copy(update={"messages": args.messages - malformed}))
    return {"clean": make_dataset(spec), "hostile": MalformedMix(cut, malformed, seed=args.seed)}


def _checked(result: dict[str, Any], dataset: Dataset, warehouse: Warehouse,
             run_id: str) -> dict[str, Any]:  # fmt: skip
    """The drain's figures plus the quarantine and gold checks against the generator."""
    wanted = dict(dataset.expected_reasons()) if isinstance(dataset, MalformedMix) else {}
    got = quarantine_reasons(warehouse, run_id)
    exact = expected_key_counts(dataset) == _gold_key_counts(warehouse, run_id)
    return {**result, "quarantine": {"expected": wanted, "got": got, "exact": got == wanted},
            "gold_counts_exact": exact}  # fmt: skip


def _ratio(rounds: list[dict[str, Any]], figure: Any) -> float:
    hostile = statistics.median(figure(r["hostile"]) for r in rounds)
    clean = statistics.median(figure(r["clean"]) for r in rounds)
    return round(hostile / clean, 3)


def main() -> None:
    """Run the rounds and print (and save) one JSON document."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=1_000_000, help="per drain")
    parser.add_argument("--malformed-fraction", type=float, default=0.01)
    parser.add_argument("--rounds", type=int, default=1, help="clean+hostile pairs")
    parser.add_argument("--seed", type=int, default=0, help="of the malformed messages")
    parser.add_argument("--warmup-messages", type=int, default=200_000, help="untimed first drain")
    parser.add_argument("--workers", type=int, default=10)
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--grouping", default="DYNAMIC_KEY")
    parser.add_argument("--max-offsets", type=int, default=500_000, help="per bronze micro-batch")
    parser.add_argument("--output", type=Path, default=Path("bench/results/hostile.json"))
    args = parser.parse_args()
    configure_logging()
    with tempfile.TemporaryDirectory(prefix="dkg-hostile-bench-") as folder:
        root = Path(folder)
        rounds: list[dict[str, Any]] = []
        with LocalBroker(root / "kafka") as broker:
            kafka = KafkaClient.from_config(load_settings(env={}).settings.kafka, broker.start())
            spark = build_spark(python_daemon=WORKER_DAEMON, app_name="dkg-hostile-bench", master="local[2]")
            broker_pid = broker.status().pid
            try:
                # The first drain of a session also starts Python workers and warms the JVM: not timed.
                spec = DatasetSpec(name="ZIPF", messages=args.warmup_messages)
                drain(
                    spark, kafka, broker_pid, Warehouse(root / "warmup"), args, make_dataset(spec), "warmup"
                )
                for number in range(args.rounds):
                    datasets = _datasets(args, time.time_ns() // 1_000_000)
                    order = ("clean", "hostile") if number % 2 == 0 else ("hostile", "clean")
                    figures: dict[str, Any] = {"order": list(order)}
                    for kind in order:
                        name = f"bench-{kind}-{number}"
                        warehouse = Warehouse(root / name)
                        result = drain(spark, kafka, broker_pid, warehouse, args, datasets[kind], name)
                        figures[kind] = _checked(result, datasets[kind], warehouse, name)
                    rounds.append(figures)
            finally:  # a failed round must not leave the JVM running
                spark.stop()
    publish({"rounds": rounds,
             "hostile_vs_clean_msg_per_s": _ratio(rounds, lambda r: r["msg_per_s"]),
             "hostile_vs_clean_cpu_s": _ratio(rounds, lambda r: sum(r["cpu_s"].values()))},
            args.output)  # fmt: skip


if __name__ == "__main__":
    main()
