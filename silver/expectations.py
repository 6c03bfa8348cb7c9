"""Silver's data-quality suites: routed tuples, quarantine, the workers' partials, and accounting.

The accounting suite validates a one-row frame that Spark derives from three tables: every
bronze message of the run is routed or quarantined, and silver holds no message
bronze does not (``unaccounted_messages`` and ``unknown_messages`` are 0 and the
distinct counts agree), so its results are still GX's.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from great_expectations import ExpectationSuite
from great_expectations import expectations as gxe
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from bronze.schemas import RAW_EVENTS
from core.config import QualityConfig
from core.quality import Check, TableRef, empty_frame, new_suite
from core.warehouse import sql_name
from silver.schemas import QUARANTINE, ROUTED_TABLE, WORKER_LATENCY, WORKER_WINDOWS

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

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
    return new_suite(sql_name(ROUTED_TABLE), [
        *_not_null(("partition", "offset", "key", "count", "event_time_ms", "worker"), mostly),
        _worker_in_range(workers, mostly),
        gxe.ExpectColumnValuesToBeBetween(column="count", min_value=config.min_count,
                                          mostly=mostly),
        gxe.ExpectCompoundColumnsToBeUnique(column_list=[*_MESSAGE, "tuple_index"], mostly=mostly),
    ])  # fmt: skip


def quarantine_suite(config: QualityConfig) -> ExpectationSuite:
    """``silver.quarantine``: every quarantined message says where it came from and why."""
    return new_suite(sql_name(QUARANTINE), [
        *_not_null(("partition", "offset", "error"), config.mostly),
        gxe.ExpectCompoundColumnsToBeUnique(column_list=_MESSAGE, mostly=config.mostly),
    ])  # fmt: skip


def worker_windows_suite(config: QualityConfig, workers: int) -> ExpectationSuite:
    """``silver.worker_windows``: partials of real workers, positive counts, one per key and batch."""
    mostly = config.mostly
    return new_suite(sql_name(WORKER_WINDOWS), [
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
    return new_suite(sql_name(WORKER_LATENCY), [
        *_not_null(("batch_id", "window_start_ms", "worker", "latency_ms", "tuples"), mostly),
        _worker_in_range(workers, mostly),
        gxe.ExpectColumnValuesToBeBetween(column="latency_ms", min_value=0, mostly=mostly),
        gxe.ExpectColumnValuesToBeBetween(column="tuples", min_value=1, mostly=mostly),
        gxe.ExpectCompoundColumnsToBeUnique(column_list=["batch_id", "window_start_ms", "worker",
                                                         "latency_ms"], mostly=mostly),
    ])  # fmt: skip


def _messages(frame: DataFrame | None, landed: bool) -> DataFrame | None:
    if frame is None:
        return None
    return frame.select(*(F.col(c).cast("bigint") for c in _MESSAGE),
                        F.lit(landed).alias("landed"), F.lit(not landed).alias("accounted"))  # fmt: skip


def accounting_frame(spark: SparkSession, bronze: DataFrame | None, routed: DataFrame | None,
                     quarantine: DataFrame | None) -> DataFrame:  # fmt: skip
    """One row: the run's bronze messages against distinct (partition, offset) in silver.

    Runs as Spark tasks: runs have millions of messages, and only the row of four
    counts reaches the driver. One aggregation per message (where was it seen?)
    instead of distincts and an outer join: a single shuffle.
    """
    tagged = [m for m in (_messages(bronze, True), _messages(routed, False),
                          _messages(quarantine, False)) if m is not None]  # fmt: skip
    rows = (functools.reduce(DataFrame.unionAll, tagged) if tagged else
            empty_frame(spark, "partition bigint, offset bigint, landed boolean, accounted boolean"))
    seen = rows.dropna(subset=_MESSAGE).groupBy(*_MESSAGE).agg(
        F.max("landed").alias("landed"), F.max("accounted").alias("accounted"))
    return seen.agg(
        F.count(F.when(F.col("landed"), 1)).alias("bronze_messages"),
        F.count(F.when(F.col("accounted"), 1)).alias("routed_or_quarantined"),
        F.count(F.when(F.col("landed") & ~F.col("accounted"), 1)).alias("unaccounted_messages"),
        F.count(F.when(~F.col("landed") & F.col("accounted"), 1)).alias("unknown_messages"),
    )


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
    routed = TableRef(*ROUTED_TABLE)
    quarantine = TableRef(*QUARANTINE, (*_MESSAGE, "error"))
    return [
        Check(routed_suite(config, workers), (routed,)),
        Check(quarantine_suite(config), (quarantine,)),
        Check(worker_windows_suite(config, workers), (TableRef(*WORKER_WINDOWS),)),
        Check(worker_latency_suite(config, workers), (TableRef(*WORKER_LATENCY),)),
        Check(accounting_suite(), (TableRef(*RAW_EVENTS, tuple(_MESSAGE)), routed,
                                   quarantine), accounting_frame),
    ]  # fmt: skip
