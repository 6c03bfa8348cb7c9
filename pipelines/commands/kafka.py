"""``dkg kafka up|down|status``: the local Kafka-protocol broker (noida-db, loopback only)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from pipelines.commands.common import port_number

__all__ = ["DEFAULT_RUN_DIR", "add_parser", "run"]

DEFAULT_RUN_DIR = Path(".dkg/kafka")


def add_parser(subparsers: Any) -> None:
    """Register ``kafka``."""
    parser = subparsers.add_parser(
        "kafka", help="start, stop or inspect the local Kafka broker",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )  # fmt: skip
    parser.add_argument("action", choices=("up", "down", "status"))
    parser.add_argument("--run-dir", type=Path, default=DEFAULT_RUN_DIR,
                        help="where the broker keeps its data, log and pid")  # fmt: skip
    parser.add_argument("--port", type=port_number, help="Kafka port (default: a free one)")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Carry out the action and say what happened."""
    from core.kafka.broker import LocalBroker

    broker = LocalBroker(args.run_dir, args.port)
    if args.action == "up":
        print(f"kafka running at {broker.start()} (data in {args.run_dir / 'data'})")
    elif args.action == "down":
        print("kafka stopped" if broker.stop() else "kafka was not running")
    else:
        status = broker.status()
        print(f"kafka running at {status.bootstrap} (pid {status.pid})" if status.running
              else "kafka not running")  # fmt: skip
        return 0 if status.running else 1
    return 0
