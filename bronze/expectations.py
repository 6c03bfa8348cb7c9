"""Bronze's data-quality suite: every landed message has its Kafka coordinates, once."""

from __future__ import annotations

from great_expectations import ExpectationSuite
from great_expectations import expectations as gxe

from bronze.schemas import RAW_EVENTS
from core.config import QualityConfig
from core.quality import Check, TableRef, new_suite
from core.warehouse import sql_name

__all__ = ["RAW_EVENTS_CHECKED", "checks", "raw_events_suite"]

RAW_EVENTS_CHECKED = ("topic", "partition", "offset", "timestamp")
"""The columns the suite reads (payloads are left out: they are large and unchecked)."""


def raw_events_suite(config: QualityConfig) -> ExpectationSuite:
    """``bronze.raw_events`` of one run: non-null coordinates, offsets unique per partition."""
    mostly = config.mostly
    return new_suite(sql_name(RAW_EVENTS), [
        gxe.ExpectTableRowCountToBeBetween(min_value=1),
        *(gxe.ExpectColumnValuesToNotBeNull(column=c, mostly=mostly)
          for c in ("topic", "partition", "offset")),
        *(gxe.ExpectColumnValuesToBeBetween(column=c, min_value=0, mostly=mostly)
          for c in ("partition", "offset")),
        # Within a run each Kafka record lands once; a replayed micro-batch must not add it again.
        gxe.ExpectCompoundColumnsToBeUnique(column_list=["topic", "partition", "offset"],
                                            mostly=mostly),
    ])  # fmt: skip


def checks(config: QualityConfig, workers: int) -> list[Check]:
    """Bronze's checks of one run (``workers`` is unused: bronze knows no routing)."""
    del workers
    return [Check(raw_events_suite(config), (TableRef(*RAW_EVENTS, RAW_EVENTS_CHECKED),))]
