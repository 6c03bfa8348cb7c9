"""One run's distribution metrics, fed commit by commit from ``silver.routed``.

Rebuilding the metrics reads, sorts and hashes every routed tuple of the run, so
refreshing gold every few seconds while a run goes on costs more with each
refresh. A feed keeps the metrics accumulator between refreshes and reads only
the commits silver made since the last one (``silver.routed`` is append-only).

Order: each commit's tuples enter the FIFO queue model sorted by ``(event time,
partition, offset, tuple)``, commits in version order. The figures therefore
depend only on the run's tuples and silver's commits, never on when gold was
refreshed: a fresh feed over the same table gives what a long-lived one gave.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import pyarrow as pa
import pyarrow.parquet as pq

from core.storage import Storage
from core.tables.delta_log import (
    AddedFile,
    DeltaLogError,
    latest_version,
    read_commit,
    snapshot_files,
)
from gold.metrics import RunMetricsAccumulator
from gold.transforms import add_routed

__all__ = ["FEED_COLUMNS", "RoutedMetricsFeed"]

logger = logging.getLogger(__name__)

FEED_COLUMNS = ["run_id", "partition", "offset", "tuple_index", "key", "event_time_ms", "worker"]


class RoutedMetricsFeed:
    """The metrics accumulator of one run plus the ``silver.routed`` version it has read.

    Args:
        storage: where the table is.
        path: the ``silver.routed`` table's URI.
        run_id: the run whose rows count.
        new_accumulator: builds an empty accumulator with the run's settings.
    """

    def __init__(self, storage: Storage, path: str, run_id: str,
                 new_accumulator: Callable[[], RunMetricsAccumulator]) -> None:  # fmt: skip
        self.storage = storage
        self.path = str(path)
        self.run_id = run_id
        self._new_accumulator = new_accumulator
        self.accumulator = new_accumulator()
        self.version = -1

    def advance(self) -> int:
        """Read the commits added since the last call; returns the version now covered.

        A commit that removed rows (a DELETE on silver) or that log cleanup
        already dropped cannot be added on top: the run is then re-read from
        the table's current snapshot, as one chunk, into a new accumulator.
        """
        latest = latest_version(self.storage, self.path)
        try:
            for version in range(self.version + 1, latest + 1):
                commit = read_commit(self.storage, self.path, version, {})
                if commit.removes_data:
                    raise DeltaLogError(f"commit {version} removed rows")
                self._add_files(commit.adds)
                self.version = version
        except DeltaLogError as why:
            logger.info("re-reading %s from its snapshot: %s", self.path, why)
            self.accumulator = self._new_accumulator()
            self._add_files(snapshot_files(self.storage, self.path, latest))
            self.version = latest
        return self.version

    def _add_files(self, files: tuple[AddedFile, ...] | list[AddedFile]) -> None:
        tables = [pq.read_table(self.storage.fs_path(f.path), filesystem=self.storage.filesystem,
                                columns=FEED_COLUMNS, filters=[("run_id", "=", self.run_id)])
                  for f in files]  # fmt: skip
        rows = [t for t in tables if t.num_rows]
        if rows:
            add_routed(self.accumulator, pa.concat_tables(rows).to_pandas())
