"""A micro-batch's input rows as the pipeline counts them, for progress and profiles.

Spark counts the rows its source returned. A source that packs many records
into one row (silver's blocks) observes the records it carried under
:data:`INPUT_ROWS_METRIC` (``DataFrame.observe``), and that count wins.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pyspark.sql import functions as F

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

__all__ = ["INPUT_ROWS_METRIC", "input_rows", "observe_input_rows"]

INPUT_ROWS_METRIC = "input_rows"


def input_rows(progress: Any) -> int:
    """Records read by one ``StreamingQueryProgress``."""
    observed = (getattr(progress, "observedMetrics", None) or {}).get(INPUT_ROWS_METRIC)
    if observed is not None and observed["rows"] is not None:
        return int(observed["rows"])
    return int(progress.numInputRows or 0)


def observe_input_rows(packed: DataFrame, records: str | Column) -> DataFrame:
    """``packed``, observing the sum of ``records`` (a column) as each batch's input rows."""
    total = F.coalesce(F.sum(records), F.lit(0)).cast("long").alias("rows")
    return packed.observe(INPUT_ROWS_METRIC, total)
