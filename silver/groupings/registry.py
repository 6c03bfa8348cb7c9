"""Grouping names (the seed's spellings, case-insensitive) -> grouping classes."""

from __future__ import annotations

import importlib
from typing import Any

from pydantic import ValidationError

from core.errors import DkgError
from silver.groupings.base import Grouping

__all__ = ["GROUPING_NAMES", "GroupingConfigError", "grouping_class", "make_grouping"]

# Imported on demand: a run that uses two groupings compiles only their kernels.
_CLASSES = {
    "SHUFFLE": "silver.groupings.shuffle:ShuffleGrouping",
    "KEY": "silver.groupings.key:KeyGrouping",
    "PARTIAL_KEY": "silver.groupings.partial_key:PartialKeyGrouping",
    "DYNAMIC_KEY": "silver.groupings.dynamic_key:DynamicKeyGrouping",
    "CONSISTENT_HASH": "silver.groupings.consistent_hash:ConsistentHashGrouping",
    "SMALOPS": "silver.groupings.smalops:SmalopsGrouping",
    "W_CHOICES": "silver.groupings.w_choices:WChoicesGrouping",
}
GROUPING_NAMES: tuple[str, ...] = tuple(_CLASSES)


class GroupingConfigError(DkgError, ValueError):
    """An unknown grouping name or invalid grouping parameters."""


def grouping_class(name: str) -> type[Grouping[Any, Any]]:
    """The class for a grouping name such as ``dynamic_key`` or ``DYNAMIC_KEY``."""
    canonical = name.strip().upper()
    if canonical not in _CLASSES:
        raise GroupingConfigError(
            f"unknown grouping {name!r}; choose from {', '.join(GROUPING_NAMES)}"
        )
    module, _, attribute = _CLASSES[canonical].partition(":")
    cls: type[Grouping[Any, Any]] = getattr(importlib.import_module(module), attribute)
    return cls


def make_grouping(
    name: str, workers: int, params: dict[str, Any] | None = None
) -> Grouping[Any, Any]:
    """Build a grouping with validated parameters.

    Raises:
        GroupingConfigError: unknown name, unknown parameter or bad value.
    """
    cls = grouping_class(name)
    try:
        validated = cls.params_type(**(params or {}))
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'params'}: {err['msg']}"
            for err in exc.errors()
        )
        raise GroupingConfigError(f"bad parameters for {cls.name}: {problems}") from None
    if workers < 1:
        raise GroupingConfigError(f"workers must be at least 1, got {workers}")
    return cls(workers, validated)
