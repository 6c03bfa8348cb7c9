"""Silver's data-quality suites: routed tuples, quarantine, the workers' partials, and accounting.

The accounting suite validates a one-row frame derived from three tables: every
bronze message of the run is routed or quarantined, and silver holds no message
bronze does not (``unaccounted_messages`` and ``unknown_messages`` are 0 and the
distinct counts agree), so its results are still GX's.
"""

from __future__ import annotations

import pandas as pd
from great_expectations import ExpectationSuite
from great_expectations import expectations as gxe

from core.config import QualityConfig
from core.quality import Check, TableRef, new_suite

__all__ = [
    "accounting_frame",
    "accounting_suite",
    "checks",
    "quarantine_suite",
    "routed_suite",
    "worker_latency_suite",
    "worker_windows_suite",
]

_MESSAGE = ["partition", "offset"]


def _not_null(columns: tuple[str, ...], mostly: float) -> list[gxe.Expectation]:
    return [gxe.ExpectColumnValuesToNotBeNull(column=c, mostly=mostly) for c in columns]


def _worker_in_range(workers: int, mostly: float) -> gxe.Expectation:
    return gxe.ExpectColumnValuesToBeBetween(column="worker", min_value=0, max_value=workers - 1,
                                             mostly=mostly)  # fmt: skip


def routed_suite(config: QualityConfig, workers: int) -> ExpectationSuite:
    """``silver.routed``: non-null keys, a worker in [0, W), positive counts, each tuple once."""
    mostly = config.mostly
    return new_suite("silver.routed", [
        *_not_null(("partition", "offset", "key", "count", "event_time_ms", "worker"), mostly),
        _worker_in_range(workers, mostly),
        gxe.ExpectColumnValuesToBeBetween(column="count", min_value=config.min_count,
                                          mostly=mostly),
        gxe.ExpectCompoundColumnsToBeUnique(column_list=[*_MESSAGE, "tuple_index"], mostly=mostly),
    ])  # fmt: skip


def quarantine_suite(config: QualityConfig) -> ExpectationSuite:
    """``silver.quarantine``: every quarantined message says where it came from and why."""
    return new_suite("silver.quarantine", [
        *_not_null(("partition", "offset", "error"), config.mostly),
        gxe.ExpectCompoundColumnsToBeUnique(column_list=_MESSAGE, mostly=config.mostly),
    ])  # fmt: skip


def worker_windows_suite(config: QualityConfig, workers: int) -> ExpectationSuite:
    """``silver.worker_windows``: partials of real workers, positive counts, one per key and batch."""
    mostly = config.mostly
    return new_suite("silver.worker_windows", [
        *_not_null(("batch_id", "window_start_ms", "worker", "key", "count", "tuples"), mostly),
        _worker_in_range(workers, mostly),
        gxe.ExpectColumnValuesToBeBetween(column="count", min_value=config.min_count,
                                          mostly=mostly),
        gxe.ExpectColumnValuesToBeBetween(column="tuples", min_value=1, mostly=mostly),
        gxe.ExpectCompoundColumnsToBeUnique(column_list=["batch_id", "window_start_ms", "worker",
                                                         "key"], mostly=mostly),
    ])  # fmt: skip


def worker_latency_suite(config: QualityConfig, workers: int) -> ExpectationSuite:
    """``silver.worker_latency``: each real worker's waits, at least one tuple each, once per batch."""
    mostly = config.mostly
    return new_suite("silver.worker_latency", [
        *_not_null(("batch_id", "window_start_ms", "worker", "latency_ms", "tuples"), mostly),
        _worker_in_range(workers, mostly),
        gxe.ExpectColumnValuesToBeBetween(column="latency_ms", min_value=0, mostly=mostly),
        gxe.ExpectColumnValuesToBeBetween(column="tuples", min_value=1, mostly=mostly),
        gxe.ExpectCompoundColumnsToBeUnique(column_list=["batch_id", "window_start_ms", "worker",
                                                         "latency_ms"], mostly=mostly),
    ])  # fmt: skip


def _messages(frame: pd.DataFrame | None) -> pd.DataFrame:
    if frame is None or frame.empty:
        return pd.DataFrame({"partition": [], "offset": []}, dtype="int64")
    return frame[_MESSAGE].dropna().astype("int64").drop_duplicates()


def accounting_frame(bronze: pd.DataFrame | None, routed: pd.DataFrame | None,
                     quarantine: pd.DataFrame | None) -> pd.DataFrame:  # fmt: skip
    """One row: the run's bronze messages against distinct (partition, offset) in silver."""
    landed = _messages(bronze)
    accounted = pd.concat([_messages(routed), _messages(quarantine)]).drop_duplicates()
    # One outer merge (vectorized) rather than Python sets: runs have millions of messages.
    sides = landed.merge(accounted, how="outer", on=_MESSAGE, indicator=True)["_merge"]
    return pd.DataFrame([{
        "bronze_messages": len(landed),
        "routed_or_quarantined": len(accounted),
        "unaccounted_messages": int((sides == "left_only").sum()),
        "unknown_messages": int((sides == "right_only").sum()),
    }])  # fmt: skip


def accounting_suite() -> ExpectationSuite:
    """Every bronze message of the run is routed or quarantined, and nothing else is."""
    return new_suite("silver.accounting", [
        gxe.ExpectColumnPairValuesToBeEqual(column_A="bronze_messages",
                                            column_B="routed_or_quarantined"),
        *(gxe.ExpectColumnValuesToBeBetween(column=c, min_value=0, max_value=0)
          for c in ("unaccounted_messages", "unknown_messages")),
    ])  # fmt: skip


def checks(config: QualityConfig, workers: int) -> list[Check]:
    """Silver's checks of one run over ``workers`` workers."""
    routed = TableRef("silver", "routed")
    quarantine = TableRef("silver", "quarantine", (*_MESSAGE, "error"))
    return [
        Check(routed_suite(config, workers), (routed,)),
        Check(quarantine_suite(config), (quarantine,)),
        Check(worker_windows_suite(config, workers), (TableRef("silver", "worker_windows"),)),
        Check(worker_latency_suite(config, workers), (TableRef("silver", "worker_latency"),)),
        Check(accounting_suite(), (TableRef("bronze", "raw_events", tuple(_MESSAGE)), routed,
                                   quarantine), accounting_frame),
    ]  # fmt: skip
