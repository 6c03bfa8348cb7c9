"""``dkg kafka up|down|status``: the embedded Kafka-protocol broker (noida-db, loopback only).

It keeps its data, log and pid in ``kafka.embedded.run_dir`` (``.dkg/kafka``), the
folder ``dkg run``, ``dkg produce`` and ``dkg join`` look in: a broker started here
is the one they use (and leave running).
"""

from __future__ import annotations

import argparse
from typing import Any

from pipelines.commands.common import add_config_options, load_from_args, port_number

__all__ = ["add_parser", "run"]


def add_parser(subparsers: Any) -> None:
    """Register ``kafka``."""
    parser = subparsers.add_parser(
        "kafka", help="start, stop or inspect the embedded Kafka broker",
        description=__doc__,
    )  # fmt: skip
    parser.add_argument("action", choices=("up", "down", "status"),
                        help="start the broker, stop it, or say whether it runs (exit code 1 "
                        "if not)")  # fmt: skip
    parser.add_argument("--run-dir", help="where the broker keeps its data, log and pid "
                        "(kafka.embedded.run_dir)")  # fmt: skip
    parser.add_argument("--port", type=port_number,
                        help="Kafka port (kafka.embedded.port; default: a free one)")  # fmt: skip
    add_config_options(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Carry out the action and say what happened."""
    from pipelines.pipeline_runtime import open_runtime

    loaded = load_from_args(args, {"run_dir": "kafka.embedded.run_dir",
                                   "port": "kafka.embedded.port"})  # fmt: skip
    broker = open_runtime(loaded).embedded_broker
    if args.action == "up":
        print(f"kafka running at {broker.start()} (data in {broker.run_dir / 'data'})")
    elif args.action == "down":
        print("kafka stopped" if broker.stop() else "kafka was not running")
    else:
        status = broker.status()
        print(f"kafka running at {status.bootstrap} (pid {status.pid})" if status.running
              else "kafka not running")  # fmt: skip
        return 0 if status.running else 1
    return 0
