"""DYNAMIC_KEY (seed 000): hot keys get a growing pool of workers."""

from __future__ import annotations

from silver.groupings.dynamic_key.grouping import DynamicKeyGrouping
from silver.groupings.dynamic_key.params import DynamicKeyParams

__all__ = ["DynamicKeyGrouping", "DynamicKeyParams"]
