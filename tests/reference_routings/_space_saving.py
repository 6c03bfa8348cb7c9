"""SpaceSaving (Metwally et al.) with one counter per tracked key, in plain Python.

A key not tracked takes the counter of a key with the smallest count and
inherits that count (the over-estimate SpaceSaving is known for). Counts are
floats so the whole summary can be decayed at once.
"""

from __future__ import annotations

__all__ = ["SpaceSaving"]


class SpaceSaving:
    """``capacity`` counters; :meth:`offer` counts one occurrence of a key."""

    def __init__(self, capacity: int) -> None:
        self.keys: list[str | None] = [None] * capacity
        self.counts = [0.0] * capacity
        self.counter_of: dict[str, int] = {}
        # Which of several smallest counts is replaced: the root of a binary min-heap over the
        # counters, raised by sift-down (left child on ties), the structure space_saving.py names.
        self.heap = list(range(capacity))
        self.position = list(range(capacity))

    def offer(self, key: str) -> tuple[float, str | None]:
        """Count ``key`` once; its estimate, and the key it displaced (None if none)."""
        counter = self.counter_of.get(key)
        displaced = None
        if counter is None:
            counter = self.heap[0]
            displaced = self.keys[counter]
            if displaced is not None:
                del self.counter_of[displaced]
            self.keys[counter] = key
            self.counter_of[key] = counter
        self.counts[counter] += 1.0
        self._sift_down(self.position[counter])
        return self.counts[counter], displaced

    def decay(self, factor: float) -> None:
        """Multiply every count by ``factor`` (the heap order is unchanged)."""
        self.counts = [count * factor for count in self.counts]

    def _sift_down(self, at: int) -> None:
        heap, counts, size = self.heap, self.counts, len(self.heap)
        counter = heap[at]
        while 2 * at + 1 < size:
            child = 2 * at + 1
            if child + 1 < size and counts[heap[child + 1]] < counts[heap[child]]:
                child += 1
            if counts[heap[child]] >= counts[counter]:
                break
            heap[at] = heap[child]
            self.position[heap[at]] = at
            at = child
        heap[at] = counter
        self.position[counter] = at
