"""``dkg advise`` on a large topic: how long a user waits for the answer.

Produces ``--messages`` ZIPF messages (1,000,000 by default: the size the answer
must come within 30 s for) into a broker of its own, then runs ``dkg advise`` on
the topic ``--rounds`` times as a user does, a process each, and reports each
wall time (interpreter start included) with the recommendation.

Usage: ``python -m bench.advise_bench [--messages 1000000] [--rounds 3]``
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.console import configure_logging, publish
from bronze.datasets.base import DatasetSpec
from bronze.datasets.registry import make_dataset
from bronze.producer import produce
from core.config import load_settings
from core.kafka.broker import LocalBroker
from core.kafka.client import KafkaClient

__all__ = ["main"]


def _advise(topic: str, bootstrap: str, folder: Path) -> tuple[float, str]:
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "pipelines.cli", "advise", "--topic", topic,  # noqa: S603
                           "--bootstrap-servers", bootstrap], cwd=folder, capture_output=True,
                          text=True, check=True)  # fmt: skip
    seconds = time.monotonic() - started
    pick = next(line for line in done.stdout.splitlines() if line.startswith("recommendation:"))
    return seconds, pick


def main() -> None:
    """Produce the topic, time ``dkg advise`` on it, print the figures (and save them)."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--output", type=Path, default=Path("bench/results/advise.json"))
    args = parser.parse_args()
    configure_logging()
    with tempfile.TemporaryDirectory(prefix="dkg-advise-bench-") as folder:
        root = Path(folder)
        topic = f"zipf-{args.messages}-s42"  # a generated topic's name: the format follows from it
        with LocalBroker(root / "kafka") as broker:
            bootstrap = broker.start()
            client = KafkaClient.from_config(load_settings(env={}).settings.kafka, bootstrap)
            spec = DatasetSpec(name="ZIPF", messages=args.messages, rate=2000, seed=42)
            produce(make_dataset(spec), client, topic, 4)
            rounds = [_advise(topic, bootstrap, root) for _ in range(args.rounds)]
    seconds = sorted(s for s, _ in rounds)
    result: dict[str, Any] = {"messages": args.messages, "seconds": [round(s, 1) for s in seconds],
                              "median_s": round(seconds[len(seconds) // 2], 1),
                              "recommendation": rounds[-1][1]}  # fmt: skip
    publish(result, args.output)


if __name__ == "__main__":
    main()
