"""``dkg advise``'s answer as text: the pick and why, the skew, the alternatives, the grid."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from gold.metrics.ranking import latency_text
from pipelines.advice.grid import GridPoint
from pipelines.advice.rule import is_modest

if TYPE_CHECKING:
    from pipelines.advise import Advice

__all__ = ["format_advice"]

_COLUMNS = ("grouping", "capacity", "saturates", "vs KEY", "dist_cost", "imbalance", "p50", "p99")


def _percent(value: float) -> str:
    return f"{value:.0%}" if value >= 0.1 else f"{value:.1%}"


_BEHIND = "*"
_BEHIND_LEGEND = ("*: the busiest worker falls behind at this load, so its queue grows for as "
                  "long as the run lasts; on a sample of short chunks, p99 is a lower bound")  # fmt: skip


def _p99(point: GridPoint) -> str:
    text = latency_text(point.p99_ms)
    return text + _BEHIND if point.has_latency and not point.keeps_up else text


def _cells(point: GridPoint) -> list[str]:
    row = point.row
    p50 = latency_text(row.p50_ms) if point.has_latency else "-"
    return [point.label, f"{row.capacity:,.0f}/s", _percent(point.saturation_load),
            f"{row.capacity_vs_key:.2f}x" if row.capacity_vs_key else "-",
            f"{row.dist_cost:.3f}", f"{row.imbalance:.4f}", p50, _p99(point)]  # fmt: skip


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]

    def line(values: Sequence[str]) -> str:
        first, *rest = values
        return "  ".join([first.ljust(widths[0]),
                          *(v.rjust(w) for v, w in zip(rest, widths[1:], strict=True))]).rstrip()  # fmt: skip

    return [line(header), line(["-" * w for w in widths]), *map(line, rows)]


def _share(value: float) -> str:
    return f"{value * 100:.3g}%"


def _skew(advice: Advice) -> list[str]:
    profile = advice.profile
    heads = " ".join(_share(s) for _, s in profile.top_keys)
    over = ", ".join(f"{n} at W={w}" for w, n in profile.keys_over.items())
    lines = [f"skew: {profile.tuples:,} tuples, {profile.distinct_keys:,} keys; the top "
             f"{len(profile.top_keys)} keys' shares: {heads}",
             f"  keys holding more than a worker's share (1/W): {over}",
             f"  the hottest key of a tenth of the event time: {profile.peak_key}, "
             f"{_share(profile.peak_share)} of that tenth"]  # fmt: skip
    if profile.drift is not None:
        lines.append(f"  hot-set drift: the hot keys of the first and last thirds of event time "
                     f"overlap {profile.drift:.0%}, weighted by share (hottest: "
                     f"{profile.first_hot}, then {profile.last_hot})")  # fmt: skip
    elif profile.first_hot is not None:
        lines.append("  hot-set drift: no key holds 1% of the first or the last third of event "
                     "time, so there is no hot set to drift")  # fmt: skip
    return lines


def _by_workers(advice: Advice) -> list[str]:
    grid, load = advice.settings.grid, advice.settings.load
    labels = list(dict.fromkeys(p.label for p in advice.points))
    saturation = {(p.label, p.workers): p.saturation_load for p in advice.points if p.load == load}
    rows = [[label, *(_percent(saturation[label, w]) for w in grid.workers)] for label in labels]
    return ["saturation load by W (the load at which the busiest worker is 100 % busy):",
            *_table(["grouping", *(f"W={w}" for w in grid.workers)], rows)]  # fmt: skip


def _by_load(advice: Advice) -> list[str]:
    grid, workers = advice.settings.grid, advice.settings.workers
    labels = list(dict.fromkeys(p.label for p in advice.points))
    p99 = {(p.label, p.load): _p99(p) for p in advice.points if p.workers == workers}
    rows = [[label, *(p99[label, u] for u in grid.loads)] for label in labels]
    return [f"p99 at W={workers} by load:",
            *_table(["grouping", *(_percent(u) for u in grid.loads)], rows)]  # fmt: skip


def format_advice(advice: Advice, command: str) -> str:
    """The advice as the terminal shows it; ``command`` is the ``dkg run`` line to try."""
    rec, settings = advice.recommendation, advice.settings
    pick, row = rec.pick, rec.pick.row
    rate = (f"{advice.tuples_per_s:,.0f} tuples/s of event time" if advice.tuples_per_s
            else "event-time rate unknown: no latencies")  # fmt: skip
    lines = [
        f"recommendation: {pick.label} at W={pick.workers} (load {_percent(pick.load)})",
        f"  imbalance {row.imbalance:.4f}, dist_cost {row.dist_cost:.3f}, p99 "
        f"{latency_text(pick.p99_ms)}, capacity {row.capacity:,.0f} tuples/s (saturates at "
        f"{_percent(pick.saturation_load)} load)",
        f"  why: {rec.reason}",
        *(f"  note: {note}" for note in rec.notes),
        f"  try: {command}",
        "",
        *_skew(advice),
        "",
        f"at W={settings.workers}, load {_percent(settings.load)} (process_ms "
        f"{settings.grid.process_ms:g}, {rate}), in the rule's order:",
        *_table(_COLUMNS, [_cells(p) for p in rec.alternatives]),
        f"rule: of the groupings with dist_cost <= {settings.max_dist_cost:g} and <= their "
        "capacity over KEY (vs KEY), the most capacity; capacities within 2 % tie and go to "
        "the lower dist_cost",
    ]  # fmt: skip
    left_out = [p.label for p in rec.alternatives if not is_modest(p, settings.max_dist_cost)]
    if left_out:
        lines.append(f"left out for their merge cost: {', '.join(left_out)}")
    if len(settings.grid.workers) > 1:
        lines += ["", *_by_workers(advice)]
    if len(settings.grid.loads) > 1 and advice.tuples_per_s:
        lines += ["", *_by_load(advice)]
    if advice.tuples_per_s and any(not p.keeps_up for p in advice.points):
        lines.append(_BEHIND_LEGEND)
    return "\n".join(lines)
