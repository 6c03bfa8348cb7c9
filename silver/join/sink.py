"""The join's micro-batch writer: silver.joined, silver.join_rejects, silver.join_state.

The micro-batch is converted to Arrow once (so the stateful join runs once)
and split by ``record``. Each table records the batch id under the query's
application id, so a batch replayed after a crash writes only what is missing.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc

from core.tables.base import TableBackend, TablePath, to_arrow
from core.tables.sink import written_everywhere
from silver.join.schemas import JOINED_COLUMNS, REJECT_COLUMNS, STATE_COLUMNS

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = ["JOINED_RECORDS", "REJECT_RECORDS", "join_batch_writer"]

logger = logging.getLogger(__name__)

JOINED_RECORDS = ("matched", "unmatched")
REJECT_RECORDS = ("late_right", "orphan_right", "duplicate", "quarantine")


def _rows(batch: pa.Table, records: tuple[str, ...], columns: list[str]) -> pa.Table:
    return batch.filter(pc.is_in(batch["record"], pa.array(records))).select(columns)


def join_batch_writer(backend: TableBackend, joined: TablePath, rejects: TablePath,
                      state: TablePath, app_id: str) -> Callable[[DataFrame, int], None]:  # fmt: skip
    """The ``foreachBatch`` function of the join query."""
    paths = (joined, rejects, state)

    def write_batch(df: DataFrame, batch_id: int) -> None:
        if written_everywhere(backend, paths, app_id, batch_id):
            return  # a replay of a batch already in every table
        batch = to_arrow(df)
        batch = batch.append_column("batch_id", pa.array([batch_id] * batch.num_rows, pa.int64()))
        pairs = _rows(batch, JOINED_RECORDS, JOINED_COLUMNS)
        backend.append(joined, pairs, app_id, batch_id)
        backend.append(rejects, _rows(batch, REJECT_RECORDS, REJECT_COLUMNS), app_id, batch_id)
        backend.append(state, _rows(batch, ("state",), STATE_COLUMNS), app_id, batch_id)
        logger.info("join batch %d: %d joined/unmatched rows of %d", batch_id, pairs.num_rows,
                    batch.num_rows)  # fmt: skip

    return write_batch
