"""Compare a crashed run's tables with a run that never crashed, row by row.

Each table is matched on its key columns. A row of the reference missing from
the crashed run, a row only the crashed run has, a key held twice, or a column
that differs is a mismatch. Floating-point columns are compared to a relative
1e-9: the same partials summed in another order (silver committed in other
pieces after a kill) may round differently in the last bits. Columns derived
from the wall clock are left out, each with its reason.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from core.tables import DeltaRsBackend
from core.warehouse import TableName, Warehouse, sql_name
from gold.schemas import DISTRIBUTION_METRICS, HOT_KEYS, JOIN_STATS, KEY_COUNTS, RUNS, WORKER_LOAD
from silver.schemas import JOINED

__all__ = ["GROUPING_TABLES", "JOIN_TABLES", "TableCheck", "compare_table"]


@dataclass(frozen=True)
class TableCheck:
    """A table to compare: its (layer, name), its key, and the columns left out (with why)."""

    table: TableName
    keys: tuple[str, ...]
    ignored: Mapping[str, str] = field(default_factory=dict)

    @property
    def label(self) -> str:
        """``layer.name``."""
        return sql_name(self.table)


_ROUTING_SECONDS = "tuples over the wall-clock seconds of routing (a resumed run times only itself)"
GROUPING_TABLES = (
    TableCheck(KEY_COUNTS, ("run_id", "window_start_ms", "key")),
    TableCheck(WORKER_LOAD, ("run_id", "window_start_ms", "worker")),
    TableCheck(DISTRIBUTION_METRICS, ("run_id", "scope", "window_start_ms"),
               {"throughput": _ROUTING_SECONDS}),
    TableCheck(HOT_KEYS, ("run_id", "splitter", "as_of_ms", "key")),
    TableCheck(RUNS, ("run_id",),
               {"started_at": "wall-clock time the last process started the run",
                "finished_at": "wall-clock time the run ended",
                "seconds": "wall-clock seconds of the last process's stages"}),
)  # fmt: skip
"""The grouping pipeline's gold tables; every other column must be equal."""

JOIN_TABLES = (
    TableCheck(JOIN_STATS, ("run_id", "scope", "window_start_ms")),
    # One row per left id: a second row, or a left (with or without partner) lost
    # across a kill, shows as a duplicated or missing key.
    TableCheck(JOINED, ("run_id", "id")),
)
"""The join's gold table and its output, one row per left id; every column must be equal."""


def _read(warehouse: Warehouse, check: TableCheck) -> pd.DataFrame | None:
    backend, uri = DeltaRsBackend(), warehouse.table_uri(*check.table)
    if backend.version(uri) is None:
        return None
    return backend.read(uri).to_pandas().drop(columns=list(check.ignored), errors="ignore")


def _equal(left: pd.Series, right: pd.Series) -> np.ndarray:
    if pd.api.types.is_float_dtype(left) or pd.api.types.is_float_dtype(right):
        a, b = left.astype(float).to_numpy(), right.astype(float).to_numpy()
        return np.isclose(a, b, rtol=1e-9, atol=0.0) | (np.isnan(a) & np.isnan(b))
    if left.dtype == object:  # lists (hot keys' workers) compare as tuples
        left, right = left.map(_plain), right.map(_plain)
    return ((left == right) | (left.isna() & right.isna())).to_numpy()


def _plain(value: Any) -> Any:
    return tuple(value) if isinstance(value, list | np.ndarray) else value


def compare_table(reference: Warehouse, crashed: Warehouse, check: TableCheck) -> dict[str, Any]:
    """One row of the comparison: counts of each kind of difference, and the first one.

    Returns:
        ``table``, ``reference`` and ``crashed`` row counts, ``missing``, ``extra``,
        ``duplicated`` (keys held more than once, either side), ``differing`` rows,
        ``example`` (the first difference), ``ok``.
    """
    ref, got = _read(reference, check), _read(crashed, check)
    row: dict[str, Any] = {"table": check.label}
    if ref is None and got is None:  # e.g. no hot keys: neither run creates the table
        return {**row, "reference": 0, "crashed": 0, "missing": 0, "extra": 0, "duplicated": 0,
                "differing": 0, "ok": True, "example": "no table in either run"}  # fmt: skip
    if ref is None or got is None:
        missing_side = "reference" if ref is None else "crashed run"
        return {**row, "reference": 0 if ref is None else len(ref),
                "crashed": 0 if got is None else len(got), "missing": 0, "extra": 0,
                "duplicated": 0, "differing": 0, "ok": False,
                "example": f"no table in the {missing_side}"}  # fmt: skip
    keys = list(check.keys)
    duplicated = int(ref.duplicated(keys).sum() + got.duplicated(keys).sum())
    both = ref.merge(got, on=keys, how="outer", suffixes=("", "__crashed"), indicator=True)
    missing, extra = both[both["_merge"] == "left_only"], both[both["_merge"] == "right_only"]
    matched = both[both["_merge"] == "both"]
    columns = [c for c in ref.columns if c not in keys]
    differs = np.zeros(len(matched), dtype=bool)
    example = ""
    for column in columns:
        unequal = ~_equal(matched[column], matched[f"{column}__crashed"])
        if unequal.any() and not example:
            first = matched[unequal].iloc[0]
            example = (f"{column} at {dict(first[keys])}: {first[column]!r} "
                       f"!= {first[f'{column}__crashed']!r}")  # fmt: skip
        differs |= unequal
    if not example and len(missing):
        example = f"missing {dict(missing.iloc[0][keys])}"
    if not example and len(extra):
        example = f"extra {dict(extra.iloc[0][keys])}"
    if not example and duplicated:
        example = "a key held twice"
    counts = {"missing": len(missing), "extra": len(extra), "duplicated": duplicated,
              "differing": int(differs.sum())}  # fmt: skip
    return {**row, "reference": len(ref), "crashed": len(got), **counts,
            "ok": not any(counts.values()), "example": example}  # fmt: skip
