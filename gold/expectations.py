"""Gold's data-quality suites: merged counts, loads, metric ranges, and totals against silver.

The totals suite validates a one-row frame that Spark derives from ``silver.routed`` and
``gold.key_counts``: the merge across workers neither loses nor invents a count
or a tuple.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from great_expectations import ExpectationSuite
from great_expectations import expectations as gxe
from pyspark.sql import functions as F

from core.config import QualityConfig
from core.quality import Check, TableRef, empty_frame, new_suite
from core.warehouse import sql_name
from gold.schemas import DISTRIBUTION_METRICS, KEY_COUNTS, WORKER_LOAD
from silver.schemas import ROUTED_TABLE

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession

__all__ = [
    "checks",
    "distribution_metrics_suite",
    "key_counts_suite",
    "totals_frame",
    "totals_suite",
    "worker_load_suite",
]


def _between(column: str, low: float | None, high: float | None,
             mostly: float = 1.0) -> gxe.Expectation:  # fmt: skip
    return gxe.ExpectColumnValuesToBeBetween(column=column, min_value=low, max_value=high,
                                             mostly=mostly)  # fmt: skip


def key_counts_suite(config: QualityConfig, workers: int) -> ExpectationSuite:
    """``gold.key_counts``: one positive count per window and key, held by 1..W workers."""
    mostly = config.mostly
    return new_suite(sql_name(KEY_COUNTS), [
        *(gxe.ExpectColumnValuesToNotBeNull(column=c, mostly=mostly)
          for c in ("window_start_ms", "key", "count")),
        _between("count", config.min_count, None, mostly),
        _between("workers", 1, workers, mostly),
        gxe.ExpectCompoundColumnsToBeUnique(column_list=["window_start_ms", "key"], mostly=mostly),
    ])  # fmt: skip


def worker_load_suite(config: QualityConfig, workers: int) -> ExpectationSuite:
    """``gold.worker_load``: real workers, non-negative loads."""
    return new_suite(sql_name(WORKER_LOAD), [
        _between("worker", 0, workers - 1, config.mostly),
        _between("tuples", 0, None, config.mostly),
    ])  # fmt: skip


def distribution_metrics_suite(config: QualityConfig, workers: int) -> ExpectationSuite:
    """``gold.distribution_metrics``: one cumulative row; every metric within its formula's range.

    Every row has a ``window_start_ms``, the cumulative one too
    (:data:`gold.schemas.CUMULATIVE_WINDOW_START_MS`): the table is partitioned by it.
    ``capacity_vs_key`` lies in [1/W, W]: any routing's busiest worker holds between
    M/W and M tuples, and so does KEY's.
    """
    slack = config.tolerance
    low, high = config.skew_s
    return new_suite(sql_name(DISTRIBUTION_METRICS), [
        gxe.ExpectColumnValuesToBeInSet(column="scope", value_set=["cumulative", "window"]),
        gxe.ExpectCompoundColumnsToBeUnique(column_list=["scope", "window_start_ms"]),
        *(gxe.ExpectColumnValuesToNotBeNull(column=c)
          for c in ("window_start_ms", "skew_s", "dist_cost", "stddev_pct", "imbalance",
                    "capacity", "capacity_vs_key")),
        _between("skew_s", low - slack, high + slack),
        _between("dist_cost", config.dist_cost_min - slack, workers + slack),
        _between("stddev_pct", config.stddev_pct_min - slack, None),
        _between("imbalance", config.imbalance_min - slack, None),
        _between("capacity", 0, None),
        _between("capacity_vs_key", 1 / workers - slack, workers + slack),
    ])  # fmt: skip


def totals_frame(spark: SparkSession, routed: DataFrame | None,
                 key_counts: DataFrame | None) -> DataFrame:  # fmt: skip
    """One row: silver's routed counts and tuples against gold's merged ones (summed in Spark)."""

    def sums(frame: DataFrame | None, schema: str, **columns: Column) -> DataFrame:
        rows = frame if frame is not None else empty_frame(spark, schema)
        return rows.agg(*(column.alias(name) for name, column in columns.items()))

    def total(column: str) -> Column:
        return F.coalesce(F.sum(column), F.lit(0)).cast("bigint")  # an empty sum is 0, not null

    silver = sums(routed, "count bigint", silver_count=total("count"),
                  silver_tuples=F.count(F.lit(1)))  # fmt: skip
    gold = sums(key_counts, "count bigint, tuples bigint", gold_count=total("count"),
                gold_tuples=total("tuples"))  # fmt: skip
    return silver.crossJoin(gold).select("silver_count", "gold_count", "silver_tuples",
                                         "gold_tuples")  # fmt: skip


def totals_suite() -> ExpectationSuite:
    """Gold's totals equal silver's: the sum of merged counts and tuples per run."""
    return new_suite("gold.totals", [
        gxe.ExpectColumnPairValuesToBeEqual(column_A="silver_count", column_B="gold_count"),
        gxe.ExpectColumnPairValuesToBeEqual(column_A="silver_tuples", column_B="gold_tuples"),
    ])  # fmt: skip


def checks(config: QualityConfig, workers: int) -> list[Check]:
    """Gold's checks of one run over ``workers`` workers."""
    key_counts = TableRef(*KEY_COUNTS)
    return [
        Check(key_counts_suite(config, workers), (key_counts,)),
        Check(worker_load_suite(config, workers), (TableRef(*WORKER_LOAD),)),
        Check(distribution_metrics_suite(config, workers),
              (TableRef(*DISTRIBUTION_METRICS),)),
        Check(totals_suite(), (TableRef(*ROUTED_TABLE, ("count",)), key_counts),
              totals_frame),
    ]  # fmt: skip
