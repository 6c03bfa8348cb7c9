"""Where a message waits between Kafka and gold in a live run, stage by stage.

A streaming query's checkpoint records each micro-batch: ``offsets/<n>`` is
written once the batch's end offsets are chosen and ``commits/<n>`` once its
sink has committed, so their modification times are when batch ``n`` started
and finished. The Delta logs of ``bronze.raw_events`` and
``silver.worker_windows`` say which version each batch of their query
committed (its application transaction), and a silver query that reads bronze
says in its offsets up to which bronze version each of its batches read.
Following every message through them splits its produce-to-gold latency into
consecutive segments that add up to it:

- ``kafka``: sent, until the batch of the query that reads Kafka starts (silver's
  when its tasks land bronze, else bronze's);
- ``bronze``: that bronze batch (read Kafka, land Parquet, commit), then
  ``silver_wait``: until the silver batch that reads that bronze version starts
  (only when bronze has a query of its own);
- ``silver``: the silver batch (route, serve in the workers' queues, commit);
- ``gold_wait``, ``gold``: until the gold refresh that covers the
  ``silver.worker_windows`` version that batch committed starts, and the refresh.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from bronze.schemas import RAW_EVENTS
from core.run_plan import query_id
from core.storage import LOCAL_FILES
from core.tables.delta_log import latest_version, read_commit
from gold.schemas import DISTRIBUTION_METRICS
from silver.schemas import ROUTED_TABLE, WORKER_WINDOWS

if TYPE_CHECKING:
    from core.warehouse import Warehouse
    from pipelines.continuous import GoldRefresh

__all__ = ["latency_breakdown", "refreshed_windows_versions", "routed_versions"]


@dataclass(frozen=True)
class _Batches:
    """A query's committed micro-batches in order: id, start and end (epoch s), source end."""

    ids: np.ndarray
    started: np.ndarray
    done: np.ndarray
    ends: list[dict[str, int]]


def _batches(checkpoint: str) -> _Batches:
    root = Path(checkpoint)
    ids = sorted(int(p.name) for p in (root / "commits").iterdir() if p.name.isdigit())
    offsets = [root / "offsets" / str(n) for n in ids]
    # Line 3 of an offset log entry is the (only) source's end offset.
    ends = [json.loads(path.read_text().splitlines()[2]) for path in offsets]
    return _Batches(np.array(ids), np.array([p.stat().st_mtime for p in offsets]),
                    np.array([(root / "commits" / str(n)).stat().st_mtime for n in ids]), ends)  # fmt: skip


def _transactions(table: str, app_id: str) -> dict[int, int]:
    """Table version -> the batch id ``app_id`` recorded in it."""
    table = str(table)
    commits = (read_commit(LOCAL_FILES, table, version, {})
               for version in range(latest_version(LOCAL_FILES, table) + 1))  # fmt: skip
    return {c.version: c.transactions[app_id] for c in commits if app_id in c.transactions}


def _committed_versions(table: str, app_id: str, batch_ids: np.ndarray) -> np.ndarray:
    """The table version that recorded each batch of ``app_id`` (-1: none)."""
    versions = {batch: version for version, batch in _transactions(table, app_id).items()}
    return np.array([versions.get(int(b), -1) for b in batch_ids])


def refreshed_windows_versions(warehouse: Warehouse, run_id: str) -> list[int]:
    """Per gold refresh of the run, in order: the ``silver.worker_windows`` version it was built from.

    A refresh's last write, to ``gold.distribution_metrics``, records the run's last
    silver micro-batch as its application transaction; the version is the one that
    committed that batch. Exact, where the version read just before a refresh can lag
    a batch that the refresh already holds.
    """
    built = _transactions(warehouse.table_uri(*DISTRIBUTION_METRICS),
                          f"gold-refresh-{run_id}")  # fmt: skip
    batches = np.array([built[v] for v in sorted(built)], dtype=np.int64)
    windows = warehouse.table_uri(*WORKER_WINDOWS)
    return _committed_versions(windows, query_id(run_id, "silver"), batches).tolist()


def routed_versions(warehouse: Warehouse, run_id: str, windows_versions: Sequence[int]) -> list[int]:
    """The ``silver.routed`` version that holds what each ``silver.worker_windows`` version holds.

    Both tables record the silver query's batches (routed first); -1 where a
    windows version holds no batch of the run.
    """
    app_id = query_id(run_id, "silver")
    batch_of = _transactions(warehouse.table_uri(*WORKER_WINDOWS), app_id)
    routed_of = {batch: version for version, batch in
                 _transactions(warehouse.table_uri(*ROUTED_TABLE), app_id).items()}  # fmt: skip
    out = []
    for version in windows_versions:
        batches = [b for v, b in batch_of.items() if v <= version and b in routed_of]
        out.append(routed_of[max(batches)] if batches else -1)
    return out


def _first_reaching(ends: np.ndarray, needed: np.ndarray) -> np.ndarray:
    """Per needed value, the first batch whose end reaches it (len(ends): none does)."""
    return np.searchsorted(np.maximum.accumulate(ends), needed, side="left")


def _first_reading(query: _Batches, partition: np.ndarray, offset: np.ndarray) -> np.ndarray:
    """Per message, the first batch of a Kafka-reading query whose end offset in its partition passes it."""
    first = np.full(len(offset), len(query.ids))
    for p in np.unique(partition):
        rows = partition == p
        ends = np.array([int(end.get(str(p), 0)) for end in query.ends])
        first[rows] = _first_reaching(ends, offset[rows] + 1)
    return first


def _version_ends(batches: _Batches) -> np.ndarray:
    return np.array([int(end["version"]) for end in batches.ends])


def latency_breakdown(warehouse: Warehouse, run_id: str, partition: np.ndarray,
                      offset: np.ndarray, sent_s: np.ndarray,
                      refreshes: Sequence[GoldRefresh]) -> dict[str, Any]:  # fmt: skip
    """Each message's wait per stage, summarised over the messages (seconds).

    Args:
        warehouse: the live run's warehouse.
        run_id: the run (its queries' checkpoints and application ids follow from it).
        partition: each bronze message's Kafka partition.
        offset: its offset.
        sent_s: its send time (epoch seconds).
        refreshes: the run's gold refreshes, in order, each with the
            ``silver.worker_windows`` version it covered (:func:`refreshed_windows_versions`).

    Returns:
        ``messages`` followed to gold, per segment its ``mean``, ``p50`` and ``p99``,
        its ``share`` of the mean latency and its mean over the last quarter of the
        messages sent, and per query (and gold) its batches and their median seconds.
    """
    silver = _batches(warehouse.checkpoint(f"{run_id}-silver"))
    bronze_checkpoint = warehouse.checkpoint(f"{run_id}-bronze")
    if Path(bronze_checkpoint, "commits").is_dir():  # bronze had a query of its own
        bronze = _batches(bronze_checkpoint)
        first_bronze = _first_reading(bronze, partition, offset)
        # Silver: the first batch that read the bronze version holding the message.
        landed = _committed_versions(warehouse.table_uri(*RAW_EVENTS),
                                     f"{run_id}-bronze", bronze.ids)  # fmt: skip
        read = np.where(first_bronze < len(bronze.ids),
                        landed[np.minimum(first_bronze, len(bronze.ids) - 1)], -1)  # fmt: skip
        first_silver = np.where(read >= 0, _first_reaching(_version_ends(silver), read),
                                len(silver.ids))  # fmt: skip
        stages = [("bronze", bronze, first_bronze), ("silver", silver, first_silver)]
    else:  # silver read Kafka itself
        first_silver = _first_reading(silver, partition, offset)
        stages = [("silver", silver, first_silver)]
    # Gold: the first refresh whose worker windows hold that silver batch.
    served = _committed_versions(warehouse.table_uri(*WORKER_WINDOWS),
                                 query_id(run_id, "silver"), silver.ids)  # fmt: skip
    needed = np.where(first_silver < len(silver.ids),
                      served[np.minimum(first_silver, len(silver.ids) - 1)], -1)  # fmt: skip
    covered = np.array([r.windows_version if r.windows_version is not None else -1
                        for r in refreshes])  # fmt: skip
    gold = np.where(needed >= 0, _first_reaching(covered, needed), len(refreshes))
    followed = gold < len(refreshes)
    for _, query, batch in stages:
        followed &= batch < len(query.ids)
    marks, names = [sent_s[followed]], ["kafka"]
    for position, (name, query, batch) in enumerate(stages):
        marks += [query.started[batch[followed]], query.done[batch[followed]]]
        names += [f"{name}_wait", name] if position else [name]
    marks += [np.array([r.started_at for r in refreshes])[gold[followed]],
              np.array([r.finished_at for r in refreshes])[gold[followed]]]  # fmt: skip
    segments = dict(zip([*names, "gold_wait", "gold"], np.diff(np.vstack(marks), axis=0),
                        strict=True))  # fmt: skip
    total = float(np.mean(marks[-1] - marks[0]))
    # The last quarter sent: the steady state, once the queries' start-up is behind.
    late = marks[0] >= np.quantile(marks[0], 0.75)

    def summary(values: np.ndarray) -> dict[str, float]:
        return {"mean": round(float(np.mean(values)), 2),
                "p50": round(float(np.percentile(values, 50)), 2),
                "p99": round(float(np.percentile(values, 99)), 2),
                "share": round(float(np.mean(values)) / total, 3),
                "last_quarter_mean": round(float(np.mean(values[late])), 2)}  # fmt: skip

    return {"messages": int(followed.sum()), "mean_latency_s": round(total, 2),
            "segments_s": {name: summary(values) for name, values in segments.items()},
            "batches": {**{name: {"count": len(q.ids),
                                  "median_s": round(float(np.median(q.done - q.started)), 2)}
                           for name, q, _ in stages},
                        "gold": {"count": len(refreshes), "median_s": round(float(np.median(
                            [r.finished_at - r.started_at for r in refreshes])), 2)}}}  # fmt: skip
