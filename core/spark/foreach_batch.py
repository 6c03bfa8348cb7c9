"""What Spark's ``DataStreamWriter.foreachBatch`` takes, named once for every sink."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = ["BatchWriter"]

BatchWriter = Callable[["DataFrame", int], None]
"""``(micro_batch_df, batch_id) -> None``."""
