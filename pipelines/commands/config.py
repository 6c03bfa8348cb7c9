"""``dkg config show|reference``: the effective settings and where they came from, or their reference."""

from __future__ import annotations

import argparse
from typing import Any

from pipelines.commands.common import add_config_options, format_table, load_from_args

__all__ = ["add_parser", "run"]

_OPTIONS = {"bootstrap_servers": "kafka.bootstrap_servers", "warehouse": "warehouse.uri"}


def add_parser(subparsers: Any) -> None:
    """Register ``config``."""
    parser = subparsers.add_parser(
        "config", help="print the effective configuration (show) or its reference (reference)",
        description="show: every setting's value and where it came from (default, a YAML "
        "file, the environment, an option), secrets masked. reference: every setting "
        "described, as Markdown (docs/config.md).",
    )  # fmt: skip
    parser.add_argument("action", choices=("show", "reference"), help="what to print")
    parser.add_argument("--bootstrap-servers", help="as in dkg run --bootstrap-servers")
    parser.add_argument("--warehouse", help="as in dkg run --warehouse")
    add_config_options(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Print the settings table or the reference."""
    if args.action == "reference":
        from core.config.reference import config_reference

        print(config_reference(), end="")
        return 0
    loaded = load_from_args(args, _OPTIONS)
    rows = [{"setting": s, "value": v, "from": o} for s, v, o in loaded.rows()]
    print(f"profile: {loaded.profile or 'none'}")
    print(format_table(rows, ("setting", "value", "from")))
    return 0
