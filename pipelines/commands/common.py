"""Pieces shared by several subcommands: config options, dataset options, tables."""

from __future__ import annotations

import argparse
import math
import re
from collections.abc import Sequence
from typing import Any

from core.config import AppConfig, load_config

__all__ = [
    "UsageError",
    "add_config_options",
    "config_from_args",
    "format_table",
    "non_negative_int",
    "parse_settings",
    "port_number",
    "positive_float",
    "positive_int",
    "speed_factor",
    "topic_name",
]


class UsageError(ValueError):
    """A command-line option has a value the command cannot use."""


# argparse types: a bad value fails while the command line is parsed, before
# any broker or Spark session starts, with the option's name in the message.
def _int(text: str) -> int:
    try:
        return int(text.replace("_", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None


def positive_int(text: str) -> int:
    """An ``int`` option that must be at least 1 (workers, messages, partitions, ...)."""
    value = _int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def non_negative_int(text: str) -> int:
    """An ``int`` option that must be at least 0."""
    value = _int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {value}")
    return value


def port_number(text: str) -> int:
    """A TCP port, 1..65535."""
    value = _int(text)
    if not 1 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"must be a port number in 1..65535, got {value}")
    return value


def positive_float(text: str) -> float:
    """A ``float`` option that must be finite and greater than 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"must be a positive number, got {text}")
    return value


_TOPIC = re.compile(r"[A-Za-z0-9._-]{1,249}")


def topic_name(text: str) -> str:
    """A legal Kafka topic name: letters, digits, ``.``, ``_``, ``-``; at most 249."""
    if not _TOPIC.fullmatch(text) or text in {".", ".."}:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a Kafka topic name (letters, digits, '.', '_', '-'; 1 to 249)"
        )
    return text


def speed_factor(text: str) -> float:
    """A producer speed: ``x10``, ``10`` or ``0.5`` (times real time); must be positive."""
    try:
        return positive_float(text.strip().lower().removeprefix("x"))
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(
            f"takes x1, x10, ... or a positive number, got {text!r}"
        ) from None


def add_config_options(parser: argparse.ArgumentParser) -> None:
    """``--config`` overlays and ``--set GROUPING.param=value`` overrides."""
    parser.add_argument(
        "--config", action="append", default=[], metavar="FILE",
        help="YAML overlay merged over conf/base.yaml (repeatable)",
    )  # fmt: skip
    parser.add_argument(
        "--set", action="append", default=[], metavar="GROUPING.PARAM=VALUE", dest="settings",
        help="override one grouping parameter, e.g. DYNAMIC_KEY.headroom=0.3 (repeatable)",
    )  # fmt: skip


def parse_settings(items: Sequence[str]) -> dict[str, dict[str, Any]]:
    """``["DYNAMIC_KEY.headroom=0.3"]`` -> ``{"DYNAMIC_KEY": {"headroom": 0.3}}``."""
    import yaml

    overrides: dict[str, dict[str, Any]] = {}
    for item in items:
        target, sep, value = item.partition("=")
        grouping, dot, param = target.partition(".")
        if not sep or not dot or not grouping or not param:
            raise UsageError(f"--set expects GROUPING.PARAM=VALUE, got {item!r}")
        overrides.setdefault(grouping.strip().upper(), {})[param.strip()] = yaml.safe_load(value)
    return overrides


def config_from_args(args: argparse.Namespace) -> AppConfig:
    """The config files named on the command line, with ``--set`` applied."""
    from core.config import default_conf_dir

    config = load_config(default_conf_dir() / "base.yaml", *args.config)
    overrides = parse_settings(args.settings)
    if not overrides:
        return config
    groupings = {name.upper(): dict(params or {}) for name, params in config.groupings.items()}
    for name, params in overrides.items():
        groupings.setdefault(name, {}).update(params)
    return config.model_copy(update={"groupings": groupings})


def _cell(value: Any) -> str:
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return str(value)
        if value != 0 and (abs(value) < 1e-3 or abs(value) >= 1e6):
            return f"{value:.3e}"
        return f"{value:.4f}"
    return str(value)


def format_table(rows: Sequence[dict[str, Any]], columns: Sequence[str]) -> str:
    """A plain aligned text table (numbers right-aligned)."""
    cells = [[_cell(row.get(c, "")) for c in columns] for row in rows]
    widths = [max(len(c), *(len(r[i]) for r in cells)) for i, c in enumerate(columns)]
    numeric = [all(isinstance(row.get(c), int | float) for row in rows) for c in columns]

    def line(values: Sequence[str]) -> str:
        return "  ".join(
            v.rjust(w) if num else v.ljust(w)
            for v, w, num in zip(values, widths, numeric, strict=True)
        ).rstrip()

    return "\n".join([line(columns), line(["-" * w for w in widths]), *map(line, cells)])
