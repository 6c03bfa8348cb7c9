"""The report's numbers: gold frames in, plain JSON-ready figure data out (pure pandas).

Everything here is a function of the gold rows alone, so the same tables give
the same report. Each chart's data is a list of plain dicts (one per run, in the
report's run order) that the HTML embeds verbatim, so a reader or a test can
check the pictures' numbers against gold.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from core.errors import DkgError
from gold.report.queue_figures import busy_time, capacities, plain, utilisation

__all__ = ["MAX_HOT_KEYS", "RUN_SETTINGS", "SUMMARY_COLUMNS", "WINDOW_METRICS", "ReportData",
           "ReportError", "build_report_data"]  # fmt: skip

logger = logging.getLogger(__name__)

SUMMARY_COLUMNS = ("tuples", "imbalance", "stddev_pct", "skew_s", "dist_cost", "p50_ms", "p99_ms",
                   "capacity", "capacity_vs_key", "throughput")  # fmt: skip
"""Cumulative ``gold.distribution_metrics`` columns shown per run."""

WINDOW_METRICS = ("imbalance", "stddev_pct", "skew_s", "e_lb", "dist_cost", "tuples", "p50_ms",
                  "p99_ms", "capacity_vs_key")  # fmt: skip
"""Per-window ``gold.distribution_metrics`` columns the report draws over time."""

RUN_SETTINGS = ("load", "speed", "process_ms", "work")
"""``gold.runs`` columns the queue model's figures need; None for a run without a row."""

MAX_HOT_KEYS = 8
"""Hot keys drawn per run (those with the largest pools); more lines are unreadable."""


class ReportError(DkgError, ValueError):
    """The gold tables cannot give the report that was asked for (no runs, unknown run id)."""


@dataclass(frozen=True)
class ReportData:
    """Figure data, one entry per run in report order; every value is JSON-compatible.

    Attributes:
        summary: Per run: ``run_id``, ``label``, ``grouping``, ``source``,
            ``workers``, the cumulative :data:`SUMMARY_COLUMNS` and the
            :data:`RUN_SETTINGS`.
        worker_load: Per run: ``tuples[w]`` summed over ``gold.worker_load`` windows.
        windows: Per run: ``window_start_ms`` and each of :data:`WINDOW_METRICS`,
            one value per window in start order.
        dist_cost: Per run: cumulative ``imbalance`` and ``dist_cost``.
        hot_keys: Per run: ``keys`` (at most :data:`MAX_HOT_KEYS`: largest pools
            first, then largest estimated share), each with ``as_of_ms`` and
            ``pool_size`` (the largest pool any splitter gave the key at that
            event time), ``total_keys``, how many keys were hot, and
            ``snapshots``, the most routing snapshots any one splitter took
            with a hot key (1: the pools are known at one moment only).
        capacity: Per run: ``capacity``, ``capacity_vs_key``, ``load`` and
            ``offered_per_s``, the arrival rate the run was measured at
            (:func:`gold.report.queue_figures.capacities`).
        utilisation: Per run and window: the busiest ``worker``, its
            ``tuples`` and ``utilisation`` in the queue model, and the run's
            ``window_ms`` (:func:`gold.report.queue_figures.utilisation`).
        busy: Per run with ``gold.worker_busy`` rows only: measured busy
            seconds per worker and per micro-batch
            (:func:`gold.report.queue_figures.busy_time`).
    """

    summary: list[dict[str, Any]]
    worker_load: list[dict[str, Any]]
    windows: list[dict[str, Any]]
    dist_cost: list[dict[str, Any]]
    hot_keys: list[dict[str, Any]]
    capacity: list[dict[str, Any]]
    utilisation: list[dict[str, Any]]
    busy: list[dict[str, Any]]


def _with_columns(frame: pd.DataFrame | None, columns: Sequence[str]) -> pd.DataFrame | None:
    """The frame with any missing ``columns`` added empty: tables written before they existed."""
    if frame is None:
        return None
    missing = [c for c in columns if c not in frame.columns]
    return frame.assign(**dict.fromkeys(missing, None)) if missing else frame


def _known_runs(runs: pd.DataFrame | None, cumulative: pd.DataFrame) -> pd.DataFrame:
    """``gold.runs`` rows (start order), or bare ids from the metrics without a runs table."""
    if runs is not None and len(runs):
        order = [c for c in ("started_at", "run_id") if c in runs.columns]
        return runs.sort_values(order, kind="stable").drop_duplicates("run_id", keep="last")
    return pd.DataFrame({"run_id": sorted(cumulative["run_id"].unique())})


def _select(known: pd.DataFrame, cumulative: pd.DataFrame, run_ids: Sequence[str]) -> list[str]:
    with_metrics = set(cumulative["run_id"])
    if not run_ids:
        chosen = [r for r in known["run_id"] if r in with_metrics]
        for missing in (r for r in known["run_id"] if r not in with_metrics):
            logger.warning("run %s has no gold metrics yet; left out of the report", missing)
        if not chosen:
            raise ReportError("no run has gold metrics yet (run `dkg run` first)")
        return chosen
    every = set(known["run_id"]) | with_metrics
    unknown = [r for r in run_ids if r not in every]
    if unknown:
        raise ReportError(f"unknown run id {', '.join(unknown)}; known: {', '.join(sorted(every))}")
    pending = [r for r in run_ids if r not in with_metrics]
    if pending:
        raise ReportError(f"run {', '.join(pending)} has no gold metrics yet")
    return list(dict.fromkeys(run_ids))


def _labels(info: pd.DataFrame) -> list[str]:
    """The run's label (else grouping, else id); repeated labels get ``W=`` then the id."""
    def name(row: dict[str, Any]) -> str:
        given = [row.get(c) for c in ("label", "grouping")]  # NaN: a run missing from gold.runs
        return str(next((g for g in given if isinstance(g, str) and g), row["run_id"]))

    base = [name(row) for row in info.to_dict("records")]
    labels = [f"{b} W={w}" if base.count(b) > 1 else b
              for b, w in zip(base, info["workers"], strict=True)]  # fmt: skip
    return [f"{label} ({run})" if labels.count(label) > 1 else label
            for label, run in zip(labels, info["run_id"], strict=True)]  # fmt: skip


def _summary(chosen: list[str], known: pd.DataFrame, cumulative: pd.DataFrame) -> pd.DataFrame:
    metrics = cumulative.drop_duplicates("run_id", keep="last").set_index("run_id")
    info = pd.DataFrame({"run_id": chosen})
    described = ("label", "grouping", "source", *RUN_SETTINGS)
    extra = [c for c in described if c in known.columns]
    info = info.merge(known[["run_id", *extra]], on="run_id", how="left")
    for column in described:
        if column not in info.columns:
            info[column] = None
    info["workers"] = metrics.loc[chosen, "workers"].to_numpy()
    for column in SUMMARY_COLUMNS:
        info[column] = metrics.loc[chosen, column].to_numpy()
    info["label"] = _labels(info)
    return info


def _worker_loads(summary: pd.DataFrame, worker_load: pd.DataFrame) -> list[dict[str, Any]]:
    totals = worker_load.groupby(["run_id", "worker"])["tuples"].sum()
    out = []
    for run_id, label, workers in summary[["run_id", "label", "workers"]].itertuples(index=False):
        per_worker = totals.get(run_id, pd.Series(dtype="int64"))
        tuples = per_worker.reindex(range(int(workers)), fill_value=0)
        out.append({"run_id": run_id, "label": label,
                    "tuples": [int(t) for t in tuples.to_numpy()]})  # fmt: skip
    return out


def _windows(summary: pd.DataFrame, metrics: pd.DataFrame) -> list[dict[str, Any]]:
    windows = metrics[metrics["scope"] == "window"].sort_values("window_start_ms")
    out = []
    for run_id, label in summary[["run_id", "label"]].itertuples(index=False):
        rows = windows[windows["run_id"] == run_id]
        values = {m: [plain(v) for v in rows[m]] for m in WINDOW_METRICS}
        out.append({"run_id": run_id, "label": label,
                    "window_start_ms": [int(v) for v in rows["window_start_ms"]], **values})  # fmt: skip
    return out


def _hottest(rows: pd.DataFrame) -> pd.Series:
    """Keys by largest pool, then largest estimated share, then name (a stable order)."""
    share = rows["estimated_share"] if "estimated_share" in rows.columns else 0.0
    peak = (rows.assign(share=pd.to_numeric(share).fillna(0.0)).groupby("key")
            .agg(pool_size=("pool_size", "max"), share=("share", "max")).reset_index())  # fmt: skip
    return peak.sort_values(["pool_size", "share", "key"], ascending=[False, False, True])["key"]


def _hot_keys(summary: pd.DataFrame, hot: pd.DataFrame | None) -> list[dict[str, Any]]:
    out = []
    for run_id, label in summary[["run_id", "label"]].itertuples(index=False):
        rows = hot[hot["run_id"] == run_id] if hot is not None else pd.DataFrame()
        keys: list[dict[str, Any]] = []
        if len(rows):
            pools = rows.groupby(["key", "as_of_ms"])["pool_size"].max().reset_index()
            top = _hottest(rows)
            for key in top.head(MAX_HOT_KEYS):
                series = pools[pools["key"] == key].sort_values("as_of_ms")
                keys.append({"key": str(key), "as_of_ms": [int(v) for v in series["as_of_ms"]],
                             "pool_size": [int(v) for v in series["pool_size"]]})  # fmt: skip
        total = int(rows["key"].nunique()) if len(rows) else 0
        snapshots = int(rows.groupby("splitter")["as_of_ms"].nunique().max()) if len(rows) else 0
        out.append({"run_id": run_id, "label": label, "keys": keys, "total_keys": total,
                    "snapshots": snapshots})  # fmt: skip
    return out


def build_report_data(metrics: pd.DataFrame, worker_load: pd.DataFrame,
                      runs: pd.DataFrame | None = None, hot_keys: pd.DataFrame | None = None,
                      run_ids: Sequence[str] = (),
                      worker_busy: pd.DataFrame | None = None) -> ReportData:  # fmt: skip
    """The figure data of the chosen runs.

    Args:
        metrics: ``gold.distribution_metrics`` rows.
        worker_load: ``gold.worker_load`` rows.
        runs: ``gold.runs`` rows, or None when the table does not exist (runs
            are then named by id and ordered by it).
        hot_keys: ``gold.hot_keys`` rows, or None when no run had a hot key.
        run_ids: Runs to show, in this order; empty: every run with metrics,
            in ``gold.runs`` start order.
        worker_busy: ``gold.worker_busy`` rows, or None when the table does
            not exist (no run did real work, ``work=cpu``).

    Raises:
        ReportError: No run has metrics, or a run id is unknown or has no metrics.
    """
    metrics = _with_columns(metrics, (*SUMMARY_COLUMNS, *WINDOW_METRICS))
    cumulative = metrics[metrics["scope"] == "cumulative"]
    known = _known_runs(_with_columns(runs, RUN_SETTINGS), cumulative)
    chosen = _select(known, cumulative, run_ids)
    summary = _summary(chosen, known, cumulative)
    rows = [{k: plain(v) for k, v in row.items()} for row in summary.to_dict("records")]
    windows = _windows(summary, metrics)
    return ReportData(
        summary=rows,
        worker_load=_worker_loads(summary, worker_load),
        windows=windows,
        dist_cost=[{"run_id": r["run_id"], "label": r["label"], "imbalance": r["imbalance"],
                    "dist_cost": r["dist_cost"]} for r in rows],
        hot_keys=_hot_keys(summary, hot_keys),
        capacity=capacities(rows),
        utilisation=utilisation(summary, worker_load, windows),
        busy=busy_time(summary, worker_busy),
    )
