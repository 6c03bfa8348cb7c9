"""The driver's CPU per gold refresh, replayed over a recorded run's silver commits.

A live run refreshes gold after each commit of ``silver.worker_windows``. This
replays those refreshes alone, without Spark or Kafka: a copy of the run's silver
tables (data files linked, not copied) grows commit by commit in the order the
run committed them, and gold is refreshed after each commit of the worker
windows, through one partials feed and one backend, as the live driver does. It
reports the process CPU each refresh took and a digest of the gold tables it
left, so two versions of the code can be checked to publish the same rows.

Record a run's silver with ``python -m bench.pipeline_bench --mode live --keep`` (its
warehouse stays in the folder it logs), then::

    python -m bench.gold_refresh_bench /tmp/dkg-bench-XXXX/live --run-id bench-live
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from core.config import RunConfig
from core.logs import configure_logging
from core.run_plan import RunPlan
from core.tables import DeltaRsBackend
from core.warehouse import Warehouse
from gold.refresh import partials_feed, refresh_gold
from gold.schemas import DISTRIBUTION_METRICS, HOT_KEYS, KEY_COUNTS, WORKER_LOAD
from silver.schemas import ROUTING_SNAPSHOTS, WORKER_LATENCY, WORKER_WINDOWS

__all__ = ["gold_digest", "replay_refreshes"]

_SILVER = (WORKER_LATENCY, ROUTING_SNAPSHOTS, WORKER_WINDOWS)  # worker windows: last
_GOLD = {KEY_COUNTS: ["window_start_ms", "key"], WORKER_LOAD: ["window_start_ms", "worker"],
         DISTRIBUTION_METRICS: ["scope", "window_start_ms"],
         HOT_KEYS: ["splitter", "as_of_ms", "key"]}  # fmt: skip


def _commits(table: Path) -> list[tuple[int, int, str, Path]]:
    """(commit time in ms, table order, table, commit file) of each commit in the table's log."""
    order = [name for _, name in _SILVER].index(table.name)
    found = []
    for path in sorted((table / "_delta_log").glob("*.json")):
        for line in path.read_text().splitlines():
            if '"commitInfo"' in line:
                found.append((int(json.loads(line)["commitInfo"]["timestamp"]), order, table.name,
                              path))  # fmt: skip
                break
    return found


def _linked_copy(source: Path, target: Path) -> None:
    """The table's folder with its data linked and an empty log, to be filled commit by commit."""
    (target / "_delta_log").mkdir(parents=True)
    for entry in source.iterdir():
        if entry.name != "_delta_log":
            (target / entry.name).symlink_to(entry.resolve())


def replay_refreshes(recorded: Warehouse, replay: Warehouse, spec: RunPlan) -> list[float]:
    """Refresh gold in ``replay`` after each worker windows commit of ``recorded``; CPU ms each.

    A refresh's ``processing_seconds`` is the time from the run's first silver
    commit to that commit, so replays of the same recording publish the same rows.
    """
    tables = {name: Path(recorded.table_uri(layer, name)) for layer, name in _SILVER}
    replayed = {name: Path(replay.table_uri(layer, name)) for layer, name in _SILVER}
    commits = sorted(c for table in tables.values() for c in _commits(table))
    for name, table in tables.items():
        _linked_copy(table, replayed[name])
    backend, feed = DeltaRsBackend(), partials_feed(replay, spec)
    cpu_ms = []
    for at_ms, _, name, path in commits:
        shutil.copy(path, replayed[name] / "_delta_log" / path.name)
        if name != WORKER_WINDOWS[1]:
            continue
        started = time.process_time()
        if refresh_gold(backend, replay, spec, (at_ms - commits[0][0]) / 1000, feed):
            cpu_ms.append((time.process_time() - started) * 1000)
    return cpu_ms


def gold_digest(warehouse: Warehouse, run_id: str) -> dict[str, str]:
    """A digest of each gold table's rows of the run, in a fixed order."""
    backend, out = DeltaRsBackend(), {}
    for (layer, table), order in _GOLD.items():
        if backend.version(warehouse.table_uri(layer, table)) is None:
            out[table] = "no table"  # hot keys: a grouping without any
            continue
        rows = backend.read(warehouse.table_uri(layer, table)).to_pandas()
        rows = rows[rows["run_id"] == run_id].sort_values(order).reset_index(drop=True)
        rows = rows[sorted(rows.columns)]
        out[table] = hashlib.sha256(rows.to_json(orient="records").encode()).hexdigest()[:16]
    return out


def main() -> None:
    """Replay, then print one JSON document."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    parser.add_argument("warehouse", type=Path, help="a recorded run's warehouse")
    parser.add_argument("--run-id", default="bench-live")
    parser.add_argument("--workers", type=int, default=10)
    parser.add_argument("--splitters", type=int, default=4)
    parser.add_argument("--grouping", default="DYNAMIC_KEY")
    args = parser.parse_args()
    configure_logging(logging.WARNING)
    spec = RunPlan(run_id=args.run_id, source_type="ZIPF", grouping=args.grouping,
                    splitters=args.splitters, run=RunConfig(workers=args.workers))  # fmt: skip
    root = Path(tempfile.mkdtemp(prefix="dkg-gold-replay-"))
    try:
        started = time.process_time()
        cpu_ms = replay_refreshes(Warehouse(args.warehouse), Warehouse(root), spec)
        total_ms = (time.process_time() - started) * 1000
        digest = gold_digest(Warehouse(root), args.run_id)
    finally:
        shutil.rmtree(root)
    result: dict[str, Any] = {
        "refreshes": len(cpu_ms), "cpu_ms_per_refresh": round(statistics.fmean(cpu_ms), 1),
        "cpu_ms_median": round(statistics.median(cpu_ms), 1), "cpu_ms_total": round(total_ms),
        "load_average": round(os.getloadavg()[0], 1), "gold": digest,
    }  # fmt: skip
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
