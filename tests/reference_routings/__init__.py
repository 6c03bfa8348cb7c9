"""Per-tuple reference routings of every grouping: the oracles of ``silver.groupings``.

Each grouping is a plain Python loop over one tuple at a time, written from the
seeds' text and the project's documented choices (docs/groupings.md, the
groupings' docstrings and parameter defaults), hashing each key with ``mmh3``.
Nothing here calls the production groupings, their state or their kernels; only
the hash seeds are shared (``silver.groupings.hashing``). Where the text leaves
a choice open, a one-line comment says whose choice the reference follows.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from tests.reference_routings import (
    consistent_hash,
    dynamic_key,
    key,
    partial_key,
    shuffle,
    smalops,
    w_choices,
)

__all__ = ["REFERENCES", "route"]

REFERENCES: dict[str, Callable[..., list[int]]] = {
    "SHUFFLE": shuffle.route,
    "KEY": key.route,
    "PARTIAL_KEY": partial_key.route,
    "DYNAMIC_KEY": dynamic_key.route,
    "CONSISTENT_HASH": consistent_hash.route,
    "SMALOPS": smalops.route,
    "W_CHOICES": w_choices.route,
}


def route(name: str, workers: int, keys: Iterable[str], times_ms: Iterable[int],
          params: dict | None = None) -> list[int]:  # fmt: skip
    """The worker of each tuple of one splitter's stream, from an empty state.

    Args:
        name: a grouping name, as in ``silver.groupings.registry.GROUPING_NAMES`` (any case).
        workers: W.
        keys: the tuples' keys (strings), in stream order.
        times_ms: their event times in milliseconds.
        params: the grouping's parameters (unset ones take the documented defaults).
    """
    canonical = name.strip().upper()
    if canonical not in REFERENCES:
        raise ValueError(f"no reference routing for {name!r}")
    return REFERENCES[canonical](
        workers, [str(k) for k in keys], [int(t) for t in times_ms], params
    )
