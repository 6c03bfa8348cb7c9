"""DYNAMIC_KEY's key-space clock, shared by both of its rules' references."""

from __future__ import annotations

from collections.abc import Iterable, Iterator


def tuples_with_cycles(keys: Iterable[str], times_ms: Iterable[int],
                       cycle_ms: int) -> Iterator[tuple[str, int, int, list[int]]]:  # fmt: skip
    """Each tuple as ``(key, now, since_first, ended)``: ``ended`` holds the ends (ms) of the
    key-space cycles passed since the tuple before; cycles are counted from the first tuple."""
    first = next_cycle = None
    for key, time_ms in zip(keys, times_ms, strict=True):
        now = int(time_ms)
        if first is None:
            first, next_cycle = now, now + cycle_ms
        ended = []
        while now >= next_cycle:
            ended.append(next_cycle)
            next_cycle += cycle_ms
        yield key, now, now - first, ended
