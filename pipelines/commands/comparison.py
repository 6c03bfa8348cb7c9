"""The groupings side by side, as ``dkg run`` and ``dkg simulate`` print them: what balance buys.

Per grouping: the queue model's p50 and p99 latency at the run's load, the
capacity (the arrival rate at which the busiest worker saturates) and its ratio
to KEY's on the same tuples, and the merge cost. A legend says what each column
means and under which load it was measured; a last line says what the best
grouping bought against KEY.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gold.metrics.ranking import best_by_capacity, latency_text

__all__ = ["COMPARISON_COLUMNS", "QueueSetting", "format_comparison"]

COMPARISON_COLUMNS = ("grouping", "p50", "p99", "capacity", "vs KEY", "dist_cost", "imbalance")
"""The table's columns; each is a ``gold.distribution_metrics`` figure, formatted."""


@dataclass(frozen=True)
class QueueSetting:
    """The queue model the figures were measured under.

    Attributes:
        workers: W.
        process_ms: service time per tuple.
        load: the workers' mean utilisation (None: unknown, a live topic's own pace).
        work: ``model`` or ``cpu`` (the workers also spent the service time for real).
    """

    workers: int
    process_ms: float
    load: float | None
    work: str = "model"


def _share(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.2e}" if 0 < value < 1e-3 else f"{value:.3f}"


def _cells(row: Mapping[str, Any]) -> list[str]:
    capacity, ratio = row.get("capacity"), row.get("capacity_vs_key")
    return [
        str(row.get("grouping", "")),
        latency_text(row.get("p50_ms")),
        latency_text(row.get("p99_ms")),
        "-" if capacity is None else f"{capacity:,.0f}/s",
        "-" if not ratio else f"{ratio:.2f}x",
        "-" if row.get("dist_cost") is None else f"{row['dist_cost']:.3f}",
        _share(row.get("imbalance")),
    ]


def _legend(setting: QueueSetting) -> list[str]:
    rate = setting.workers * 1000.0 / setting.process_ms
    load = (f"tuples arriving at {setting.load:.0%} of the {setting.workers} workers' "
            f"{rate:,.0f}/s" if setting.load is not None else
            "tuples arriving at the topic's own pace")  # fmt: skip
    real = " (and spent for real: work=cpu)" if setting.work == "cpu" else ""
    return [
        f"p50, p99: a tuple's wait and service in its worker's FIFO queue, {setting.process_ms:g} ms "
        f"per tuple{real}, {load}",
        "capacity: the highest arrival rate before the busiest worker saturates; vs KEY: that "
        "over KEY's on the same tuples",
        "dist_cost: workers per key, the partial counts to merge (1: none); imbalance: the "
        "busiest worker's excess over the mean, as a share of all tuples",
    ]


def _verdict(rows: Sequence[Mapping[str, Any]]) -> str | None:
    key = next((r for r in rows if r.get("grouping") == "KEY"), None)
    scored = [r for r in rows if r.get("capacity") and r.get("p99_ms") is not None]
    if key is None or len(scored) < 2:
        return None
    best = best_by_capacity(scored, lambda r: r["capacity"], lambda r: r["dist_cost"])
    if best is key:
        return "KEY is already as good as any: nothing to split."
    return (f"{best['grouping']}: p99 {latency_text(best['p99_ms'])} against KEY's "
            f"{latency_text(key['p99_ms'])}, {best['capacity_vs_key']:.2f}x its capacity, for "
            f"{best['dist_cost'] - 1:.1%} more partial counts to merge")  # fmt: skip


def format_comparison(rows: Sequence[Mapping[str, Any]], setting: QueueSetting) -> str:
    """The table, its legend and the verdict (``rows``: cumulative metric rows with ``grouping``)."""
    cells = [_cells(row) for row in rows]
    widths = [max(len(c), *(len(r[i]) for r in cells)) for i, c in enumerate(COMPARISON_COLUMNS)]

    def line(values: Sequence[str]) -> str:
        first, *rest = values
        return "  ".join([first.ljust(widths[0]),
                          *(v.rjust(w) for v, w in zip(rest, widths[1:], strict=True))]).rstrip()  # fmt: skip

    table = [line(COMPARISON_COLUMNS), line(["-" * w for w in widths]), *map(line, cells)]
    verdict = _verdict(rows)
    return "\n".join([*table, *_legend(setting), *([verdict] if verdict else [])])
