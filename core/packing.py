"""Greedy bin packing: items of known weight spread over a fixed number of bins."""

from __future__ import annotations

import heapq
from collections.abc import Sequence

__all__ = ["greedy_bins"]


def greedy_bins(weights: Sequence[int], count: int) -> list[list[int]]:
    """The items' indexes in ``count`` bins of similar total weight, empty bins left out.

    Largest first, each to the lightest bin (ties to the first); each bin keeps its
    items in index order.
    """
    bins: list[list[int]] = [[] for _ in range(count)]
    heap = [(0, slot) for slot in range(count)]
    for index in sorted(range(len(weights)), key=lambda i: -weights[i]):  # stable
        load, slot = heapq.heappop(heap)
        bins[slot].append(index)
        heapq.heappush(heap, (load + weights[index], slot))
    return [sorted(b) for b in bins if b]
