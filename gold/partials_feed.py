"""One run's silver outputs for gold, fed commit by commit.

Gold is refreshed every few seconds while a run goes on; re-reading every
partial of the run each time would cost more with each refresh. A feed keeps
the run's :class:`RunPartials` between refreshes and reads only the commits made
since the last one to ``silver.worker_windows``, ``silver.worker_latency`` and
``silver.routing_snapshots`` (all append-only), and in physical mode
``silver.worker_busy``. The sums do not depend on when
gold was refreshed: a fresh feed over the same tables gives what a long-lived
one gave. Windows the partials released (:meth:`RunPartials.release`) that new
partials reach are read again whole from the tables' snapshots.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from core.storage import Storage
from core.tables.delta_log import (
    AddedFile,
    DeltaLogError,
    latest_version,
    newest_version,
    read_commit,
    snapshot_files,
)
from core.windows import window_end
from gold.metrics.partials import RunPartials
from silver.schemas import SNAPSHOTS_ARROW

__all__ = ["RunPartialsFeed"]

logger = logging.getLogger(__name__)

_WINDOWS_COLUMNS = ["window_start_ms", "worker", "key", "count", "tuples"]
_BUSY_COLUMNS = ["batch_id", "worker", "tuples", "busy_s", "wall_s"]
_LATENCY_COLUMNS = ["window_start_ms", "worker", "latency_ms", "tuples", "first_event_ms",
                    "last_completion_ms"]  # fmt: skip


class RunPartialsFeed:
    """A run's :class:`RunPartials` plus the table versions it has read.

    Args:
        storage: where the tables are.
        windows: the ``silver.worker_windows`` table's URI.
        latency: the ``silver.worker_latency`` table's URI.
        snapshots: the ``silver.routing_snapshots`` table's URI.
        run_id: the run whose rows count.
        new_partials: builds empty partials with the run's settings.
        busy: the ``silver.worker_busy`` table's URI (physical mode), or None.
    """

    def __init__(self, storage: Storage, windows: str, latency: str, snapshots: str, run_id: str,
                 new_partials: Callable[[], RunPartials], busy: str | None = None) -> None:  # fmt: skip
        self.storage = storage
        self.run_id = run_id
        self._tables = {"windows": str(windows), "latency": str(latency),
                        "snapshots": str(snapshots),
                        **({"busy": str(busy)} if busy is not None else {})}  # fmt: skip
        self._busy: list[pa.Table] = []  # read, not yet taken
        self._new_partials = new_partials
        self.partials = new_partials()
        self._versions = {name: -1 for name in self._tables}
        self._snapshots: list[pa.Table] = []  # read, not yet taken
        self._snapshots_whole = True  # they hold every snapshot of the run

    def advance(self) -> None:
        """Add the partials and routing snapshots committed since the last call.

        A commit that removed rows (a DELETE on silver) or that log cleanup
        already dropped cannot be added on top: the run is then re-read from
        the tables' current snapshots into new partials (and every snapshot
        is new again).
        """
        try:
            files, versions = self._new_files()
        except DeltaLogError as why:
            self._snapshots, self._snapshots_whole = [], True
            logger.info("re-reading the run's worker partials from their snapshots: %s", why)
            self.partials = self._new_partials()
            versions = {name: latest_version(self.storage, path)
                        for name, path in self._tables.items()}  # fmt: skip
            files = {name: snapshot_files(self.storage, path, versions[name]) if versions[name] >= 0
                     else [] for name, path in self._tables.items()}  # fmt: skip
        windows = self._read(files["windows"], _WINDOWS_COLUMNS)
        latency = self._read(files["latency"], _LATENCY_COLUMNS)
        snapshots = self._read(files["snapshots"], SNAPSHOTS_ARROW.names)
        busy = self._read(files.get("busy", []), _BUSY_COLUMNS)
        if busy is not None:
            self._busy.append(busy)
        if windows is not None:
            self.partials.add_windows(windows)
        if latency is not None:
            self.partials.add_latency(latency)
        if snapshots is not None:
            self._snapshots.append(snapshots)
        self._versions = versions
        self._restore_stale()

    def _restore_stale(self) -> None:
        # Late partials of windows whose sums were released: the window is read again
        # whole, at the versions just added, which is rare and costs one table scan.
        stale = self.partials.take_stale()
        if not stale:
            return
        files = {name: snapshot_files(self.storage, self._tables[name], self._versions[name])
                 for name in ("windows", "latency")}  # fmt: skip
        width = self.partials.window_ms
        # One read of each table over every stale window, then split per window.
        during = (stale[0], window_end(stale[-1], width))
        windows = _frame(self._read(files["windows"], _WINDOWS_COLUMNS, during), _WINDOWS_COLUMNS)
        latency = _frame(self._read(files["latency"], _LATENCY_COLUMNS, during), _LATENCY_COLUMNS)
        for start in stale:
            self.partials.restore(start, _of_window(windows, start, width),
                                  _of_window(latency, start, width))  # fmt: skip

    def take_snapshots(self) -> tuple[pa.Table, bool]:
        """The run's routing snapshots read since the last call, and whether they are all of them.

        Snapshots stay until taken, so a refresh that publishes nothing loses none.
        """
        taken, whole = self._snapshots, self._snapshots_whole
        self._snapshots, self._snapshots_whole = [], False
        if not taken:
            return SNAPSHOTS_ARROW.empty_table(), whole
        return pa.concat_tables(taken), whole

    def take_busy(self) -> pa.Table | None:
        """The run's ``silver.worker_busy`` rows read since the last call (None: none)."""
        taken, self._busy = self._busy, []
        return pa.concat_tables(taken) if taken else None

    def _new_files(self) -> tuple[dict[str, list[AddedFile]], dict[str, int]]:
        files: dict[str, list[AddedFile]] = {}
        versions = {}
        for name, path in self._tables.items():
            versions[name] = newest_version(self.storage, path, self._versions[name])
            files[name] = []
            for version in range(self._versions[name] + 1, versions[name] + 1):
                commit = read_commit(self.storage, path, version, {})
                if commit.removes_data:
                    raise DeltaLogError(f"commit {version} of {path} removed rows")
                files[name].extend(commit.adds)
        return files, versions

    def _read(self, files: list[AddedFile], columns: list[str],
              during: tuple[int, int] | None = None) -> pa.Table | None:  # fmt: skip
        """The run's rows in ``files`` (with ``during``: whose window starts in ``[start, end)``)."""
        if not files:
            return None
        # A refresh reads a few small files: one by one on this thread costs half of
        # what a dataset over them costs (its planning and its thread pool).
        parts = []
        for added in files:
            file = self.storage.parquet_file(added.path)
            runs = _run_ids(file)
            if runs is not None and self.run_id not in runs:
                continue  # another run's rows only
            if runs == {self.run_id} and during is None:  # this run's rows only
                parts.append(file.read(columns=columns, use_threads=False))
                continue
            rows = file.read(columns=list(dict.fromkeys(["run_id", *columns])), use_threads=False)
            keep = pc.equal(rows["run_id"], self.run_id)
            if during is not None:
                starts = rows["window_start_ms"]
                keep = pc.and_(keep, pc.and_(pc.greater_equal(starts, during[0]),
                                             pc.less(starts, during[1])))  # fmt: skip
            parts.append(rows.filter(keep).select(columns))
        if not parts:
            return None
        rows = pa.concat_tables(parts)
        return rows if rows.num_rows else None


def _run_ids(file: pq.ParquetFile) -> set[str] | None:
    """The file's run ids when its statistics tell them (each row group one run), else None.

    Silver's files are written per task, so nearly all hold a single run: their
    rows need no comparison (a third of a small file's reading, measured).
    """
    metadata = file.metadata
    paths = [metadata.schema.column(i).path for i in range(metadata.num_columns)]
    if "run_id" not in paths:
        return None
    column, runs = paths.index("run_id"), set()
    for group in range(metadata.num_row_groups):
        stats = metadata.row_group(group).column(column).statistics
        # Bounds that meet hold every row's value (truncated bounds could not meet).
        if (stats is None or not stats.has_min_max or not stats.has_null_count
                or stats.null_count or not isinstance(stats.min, str) or stats.min != stats.max):  # fmt: skip
            return None
        runs.add(stats.min)
    return runs


def _frame(rows: pa.Table | None, columns: list[str]) -> pd.DataFrame:
    return rows.to_pandas() if rows is not None else pd.DataFrame(columns=columns)


def _of_window(rows: pd.DataFrame, start: int, width: int) -> pd.DataFrame:
    starts = rows["window_start_ms"]
    return rows[(starts >= start) & (starts < window_end(start, width))]
