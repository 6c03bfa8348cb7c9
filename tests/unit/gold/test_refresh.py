"""Gold refresh: nothing is published before the run has worker windows."""

from __future__ import annotations

import pandas as pd
import pyarrow as pa

from core.tables import DeltaRsBackend
from core.warehouse import Warehouse
from gold.refresh import GoldSettings, refresh_gold
from silver.sink import ROUTED_TABLE_COLUMNS
from silver.windows import WINDOW_KEYS

SNAPSHOTS = pa.schema([("run_id", pa.string()), ("splitter", pa.int32()),
                       ("event_time_ms", pa.int64()), ("state", pa.binary())])  # fmt: skip


def _windows(run_id: str, rows: int) -> pd.DataFrame:
    return pd.DataFrame({
        "run_id": [run_id] * rows, "window_start_ms": [0] * rows,
        "worker": pd.array(range(rows), dtype="int32"), "key": [f"k{i}" for i in range(rows)],
        "count": pd.array([2] * rows, dtype="int64"), "tuples": pd.array([1] * rows, dtype="int64"),
        "window_end_ms": [15_000] * rows,
    })[[*WINDOW_KEYS, "count", "tuples", "window_end_ms"]]  # fmt: skip


def test_gold_waits_for_the_runs_first_worker_windows(tmp_path) -> None:
    backend, warehouse = DeltaRsBackend(), Warehouse(tmp_path)
    windows = warehouse.table_uri("silver", "worker_windows")
    settings = GoldSettings("r", 3, "KEY", {})
    # The table exists (a stage started on empty input) but holds only another run.
    backend.append(windows, _windows("other-run", 2), "windows", 0)

    assert not refresh_gold(backend, warehouse, settings, 1.0)
    assert backend.version(warehouse.table_uri("gold", "key_counts")) is None

    backend.append(windows, _windows("r", 3), "windows", 1)
    routed = _windows("r", 3).assign(splitter=0, partition=0, offset=range(3), tuple_index=0,
                                     event_time_ms=0, count=2)  # fmt: skip
    backend.append(warehouse.table_uri("silver", "routed"), routed[ROUTED_TABLE_COLUMNS],
                   "silver", 0)  # fmt: skip
    backend.create_if_missing(warehouse.table_uri("silver", "routing_snapshots"), SNAPSHOTS)
    assert refresh_gold(backend, warehouse, settings, 1.0)
    counts = backend.read(warehouse.table_uri("gold", "key_counts")).to_pandas()
    assert sorted(counts["key"]) == ["k0", "k1", "k2"] and counts["count"].tolist() == [2, 2, 2]
