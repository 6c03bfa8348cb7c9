"""The workers' query on Spark: their partials give the simulator's figures, each batch once."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from core.spark.placement import spread_group_keys
from core.storage import LOCAL_FILES
from core.tables import DeltaRsBackend
from gold.metrics import RunMetricsAccumulator
from gold.metrics.partials import RunPartials
from silver.groupings.hashing import hash_keys
from silver.routed_source import read_worker_blocks
from silver.sink import ROUTED_TABLE_ARROW
from silver.worker_query import WorkerTables, serve_workers, worker_tables_writer
from tests.integration.waiting import await_query

pytestmark = [pytest.mark.spark, pytest.mark.slow]

WORKERS = 5


def _routed_commits(path, commits: int, rows: int) -> list[pa.Table]:
    rng = np.random.default_rng(8)
    backend, out = DeltaRsBackend(), []
    for version in range(commits):
        table = pa.table({
            "run_id": rng.choice(["r", "other"], rows, p=[0.9, 0.1]), "splitter": np.zeros(rows),
            "partition": rng.integers(0, 3, rows), "offset": np.arange(rows) + version * rows,
            "tuple_index": np.zeros(rows), "key": rng.choice([f"k{i}" for i in range(30)], rows),
            "count": rng.integers(1, 3, rows), "event_time_ms": rng.integers(0, 200_000, rows),
            "worker": rng.integers(0, WORKERS, rows),
        }).cast(ROUTED_TABLE_ARROW)  # fmt: skip
        backend.append(str(path), table, "silver", version)
        out.append(table.filter(pa.compute.equal(table["run_id"], "r")))
    return out


def _run_workers(spark, tmp_path, tables: WorkerTables) -> None:
    keys = spread_group_keys(WORKERS, 2)
    blocks = read_worker_blocks(spark, LOCAL_FILES, str(tmp_path / "routed"), "r", keys, 1)
    served = serve_workers(blocks, 15_000, 2.0, 4.0)
    writer = worker_tables_writer(DeltaRsBackend(), LOCAL_FILES, tables, "r", "r-workers")
    query = (served.writeStream.foreachBatch(writer)
             .option("checkpointLocation", str(tmp_path / "ckpt"))
             .trigger(availableNow=True).start())  # fmt: skip
    await_query(query)


def test_workers_partials_give_the_accumulators_figures_once(spark, tmp_path):
    commits = _routed_commits(tmp_path / "routed", 3, 2000)
    tables = WorkerTables(str(tmp_path / "windows"), str(tmp_path / "latency"))
    _run_workers(spark, tmp_path, tables)
    backend = DeltaRsBackend()
    versions = (backend.version(tables.windows), backend.version(tables.latency))
    _run_workers(spark, tmp_path, tables)  # the same checkpoint: nothing new, nothing written
    assert (backend.version(tables.windows), backend.version(tables.latency)) == versions

    windows = backend.read(tables.windows).to_pandas()
    latency = backend.read(tables.latency).to_pandas()
    assert set(windows["run_id"]) == {"r"} and windows["batch_id"].nunique() == 3  # one per commit
    assert not windows.duplicated(["batch_id", "window_start_ms", "worker", "key"]).any()
    partials = RunPartials(WORKERS, 60_000, 4.0)
    partials.add_windows(windows)
    partials.add_latency(latency)

    oracle = RunMetricsAccumulator(WORKERS, 60_000, 2.0, 4.0)
    for commit in commits:
        rows = commit.to_pandas().sort_values(["event_time_ms", "partition", "offset", "tuple_index"],
                                              kind="stable")  # fmt: skip
        oracle.add(hash_keys(rows["key"].to_numpy(object)).fingerprint, rows["worker"].to_numpy(),
                   rows["event_time_ms"].to_numpy())  # fmt: skip
    expected, actual = oracle.result(1.0), partials.result(1.0)
    assert sum(c.num_rows for c in commits) == actual.cumulative.tuples
    for got, want in zip([actual.cumulative, *actual.windows], [expected.cumulative,
                                                                *expected.windows], strict=True):  # fmt: skip
        assert got.to_dict() == pytest.approx(want.to_dict(), rel=1e-9)


def test_a_query_killed_while_writing_its_first_offset_starts_again(spark, tmp_path):
    from core.spark.stages import Stage, start_query

    commits = _routed_commits(tmp_path / "routed", 2, 500)
    # What SIGKILL leaves when it lands in the first offset's write: a temporary
    # file and no batch. Spark refuses such a checkpoint for a stateful query.
    offsets = tmp_path / "ckpt" / "offsets"
    offsets.mkdir(parents=True)
    (offsets / ".0.5f1c2a.tmp").write_text("v1\n")
    tables = WorkerTables(str(tmp_path / "windows"), str(tmp_path / "latency"))
    blocks = read_worker_blocks(spark, LOCAL_FILES, str(tmp_path / "routed"), "r",
                                spread_group_keys(WORKERS, 2), 1)  # fmt: skip
    writer = worker_tables_writer(DeltaRsBackend(), LOCAL_FILES, tables, "r", "r-workers")
    stage = Stage("workers", serve_workers(blocks, 15_000, 2.0, 4.0), writer, str(tmp_path / "ckpt"))
    await_query(start_query(stage, availableNow=True))
    windows = DeltaRsBackend().read(tables.windows).to_pandas()
    assert windows["tuples"].sum() == sum(c.num_rows for c in commits)
