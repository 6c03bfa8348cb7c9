"""Pieces shared by several subcommands: option types, settings from options, tables."""

from __future__ import annotations

import argparse
import math
import os
import re
from collections.abc import Mapping, Sequence
from typing import Any

from core.config import LoadedSettings, Settings, load_settings
from core.config.loader import LOCAL_PROFILE
from core.errors import DkgError

__all__ = [
    "UsageError",
    "add_config_options",
    "add_queue_options",
    "format_table",
    "load_from_args",
    "message_format",
    "non_negative_int",
    "parse_settings",
    "port_number",
    "positive_float",
    "positive_int",
    "speed_factor",
    "topic_name",
]


class UsageError(DkgError, ValueError):
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


def message_format(text: str) -> str:
    """A message format a silver parser reads (``keyed-json``, a dataset's name, ...)."""
    from silver.parsers.registry import UnknownSourceError, source_type_for

    try:
        source_type_for(text)
    except UnknownSourceError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def speed_factor(text: str) -> float:
    """A producer speed: ``x10``, ``10`` or ``0.5`` (times real time); must be positive."""
    try:
        return positive_float(text.strip().lower().removeprefix("x"))
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(
            f"takes x1, x10, ... or a positive number, got {text!r}"
        ) from None


def add_queue_options(parser: argparse.ArgumentParser, speed_help: str, work: bool = True) -> None:
    """The queue model's options: ``--load`` or ``--speed`` (one of them), ``--process-ms``,
    and with ``work`` the physical mode's ``--work``."""
    arrivals = parser.add_mutually_exclusive_group()
    arrivals.add_argument("--load", type=positive_float,
                          help="the workers' mean utilisation the arrivals make: tuples arrive "
                          "at load x W / process_ms (run.load; 0.8: 80 %% busy on average)")  # fmt: skip
    arrivals.add_argument("--speed", type=speed_factor, help=f"{speed_help} (run.speed)")
    parser.add_argument("--process-ms", type=positive_float,
                        help="service time per tuple, ms (run.process_ms)")  # fmt: skip
    if work:
        parser.add_argument("--work", choices=("model", "cpu"), type=str.lower,
                            help="cpu: each worker really spends --process-ms of CPU per tuple "
                            "in its Spark task (run.work; default: model only)")  # fmt: skip


def add_config_options(parser: argparse.ArgumentParser) -> None:
    """``--profile``, ``--config`` overlays and ``--set KEY=VALUE`` overrides."""
    parser.add_argument("--profile", metavar="NAME",
                        help="conf/NAME.yaml over conf/base.yaml (default: local unless a "
                        "Kafka is named)")  # fmt: skip
    parser.add_argument(
        "--config", action="append", default=[], metavar="FILE",
        help="YAML overlay merged over the base and profile (repeatable)",
    )  # fmt: skip
    parser.add_argument(
        "--set", action="append", default=[], metavar="KEY=VALUE", dest="settings",
        help="override one setting, e.g. run.workers=20 or DYNAMIC_KEY.headroom=0.3 "
        "(a grouping's parameter; repeatable)",
    )  # fmt: skip


def parse_settings(items: Sequence[str]) -> dict[str, tuple[Any, str]]:
    """``["run.workers=20", "DYNAMIC_KEY.headroom=0.3"]`` -> dotted settings and their option.

    A first segment in capitals names a grouping: ``DYNAMIC_KEY.headroom`` is
    ``groupings.DYNAMIC_KEY.headroom``.
    """
    import yaml

    overrides: dict[str, tuple[Any, str]] = {}
    for item in items:
        target, sep, value = item.partition("=")
        target = target.strip()
        head, dot, rest = target.partition(".")
        if not sep or not dot or not head or not rest:
            raise UsageError(f"--set expects KEY=VALUE with a dotted KEY, got {item!r}")
        key = f"groupings.{head}.{rest}" if head.isupper() else target
        try:
            parsed = yaml.safe_load(value)
        except yaml.YAMLError:
            parsed = value
        overrides[key] = (parsed, f"--set {target}")
    return overrides


def load_from_args(args: argparse.Namespace, options: Mapping[str, str]) -> LoadedSettings:
    """The settings of the command line: files, environment, ``--set``, then ``options``.

    Args:
        args: the parsed command line (with :func:`add_config_options`' options).
        options: option destination -> dotted setting it sets when given.
    """
    cli = parse_settings(getattr(args, "settings", ()))
    for dest, dotted in options.items():
        value = getattr(args, dest, None)
        if value is not None:
            cli[dotted] = (value, "--" + dest.replace("_", "-"))
    overlays, profile = getattr(args, "config", ()), getattr(args, "profile", None)
    loaded = load_settings(overlays, cli, os.environ, profile)
    if loaded.profile is None and _names_the_embedded_broker(loaded.settings):
        # Named by its address (as `dkg kafka up` prints it), it is still the embedded broker.
        loaded = load_settings(overlays, cli, os.environ, LOCAL_PROFILE)
    return loaded


def _names_the_embedded_broker(settings: Settings) -> bool:
    """Whether ``kafka.bootstrap_servers`` is the running embedded broker's address."""
    from core.kafka.broker import LocalBroker

    named = settings.kafka.bootstrap_servers or ""
    running = LocalBroker(settings.kafka.embedded.run_dir).status().bootstrap
    loopback = {"localhost", "127.0.0.1"}
    addresses = {tuple(a.strip().rsplit(":", 1)) for a in named.split(",") if ":" in a}
    return running is not None and any(host in loopback and port == running.rsplit(":", 1)[1]
                                       for host, port in addresses)  # fmt: skip


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
