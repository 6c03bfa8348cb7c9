"""How skewed a stream is: its hottest keys' shares, how flat its head is, how its hot set drifts.

Shares count tuples (what a worker serves), not the tuples' ``count`` field.

- ``top_keys``: the hottest keys and their shares (the first is the top share).
- ``peak_share``: the largest share one key holds of the tuples of one tenth of
  the sample's event time: a hot set that moves has no key over a worker's share
  overall, yet overloads a worker while each key is hot.
- ``keys_over``: per W, how many keys each hold more than 1/W of the tuples, a
  worker's fair share: KEY gives each of them a worker that is overloaded
  however the other keys fall, and no grouping that keeps a key on one worker
  can do better. Several such keys of similar share (a flat head) need every
  one of them split; one (a single hot key) needs one.
- ``drift``: how much of the hot set stays from the first third of the sample's
  event time to its last third. Each third's hot set is its top keys (up to 10)
  holding at least 1 % of its tuples; over the keys of either hot set, the
  weighted Jaccard overlap sum(min(p, q)) / sum(max(p, q)) of their shares p in
  the first third and q in the last. 1: the same hot keys with the same shares;
  0: none in common, so a grouping must find new hot keys as it goes. None when
  neither third has a key that hot (a flat stream has no hot set to drift; its
  top keys by chance would differ from third to third).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

__all__ = ["DRIFT_MIN_SHARE", "DRIFT_TOP", "PEAK_SLICES", "SkewProfile", "drift", "peak_share",
           "skew_profile", "top_keys"]  # fmt: skip

DRIFT_TOP = 10
"""At most this many top keys make a third's hot set."""
DRIFT_MIN_SHARE = 0.01
"""A hot-set key holds at least this share of its third's tuples."""
PEAK_SLICES = 10
"""Equal slices of event time in which ``peak_share`` is looked for."""
_PEAK_MIN_TUPLES = 100  # a slice with fewer tuples says little about shares


@dataclass(frozen=True)
class SkewProfile:
    """A stream's skew (see the module's docstring).

    Attributes:
        tuples: tuples measured.
        distinct_keys: distinct keys among them.
        top_keys: up to ten hottest keys and their shares of the tuples, hottest first.
        keys_over: per W, keys holding more than 1/W of the tuples.
        peak_share: the largest share of one key in one tenth of the event time.
        peak_key: that key (None: no tuples).
        drift: weighted Jaccard overlap of the first and last thirds' hot sets (None: no
            time span, or no hot key).
        first_hot: the first third's hottest key (None: no time span).
        last_hot: the last third's hottest key (None: no time span).
    """

    tuples: int
    distinct_keys: int
    top_keys: list[tuple[str, float]]
    keys_over: dict[int, int] = field(default_factory=dict)
    peak_share: float = 0.0
    peak_key: str | None = None
    drift: float | None = None
    first_hot: str | None = None
    last_hot: str | None = None

    @property
    def top_share(self) -> float:
        """The hottest key's share of the tuples (0 for no tuples)."""
        return self.top_keys[0][1] if self.top_keys else 0.0


def _tuples_per_key(keys: np.ndarray) -> pd.Series:
    # Ties are broken by key, so the same tuples always give the same top keys.
    counts = pd.Series(keys, dtype=object).value_counts(sort=False)
    frame = pd.DataFrame({"key": counts.index.astype(str), "tuples": counts.to_numpy()})
    frame = frame.sort_values(["tuples", "key"], ascending=[False, True], kind="stable")
    return pd.Series(frame["tuples"].to_numpy(), index=frame["key"].to_numpy())


def top_keys(keys: np.ndarray, count: int) -> list[str]:
    """The ``count`` keys with the most tuples (ties by key), hottest first."""
    return _tuples_per_key(keys).index[:count].tolist()


def drift(keys: np.ndarray, event_times_ms: np.ndarray, top: int = DRIFT_TOP,
          min_share: float = DRIFT_MIN_SHARE) -> tuple[float | None, str | None, str | None]:  # fmt: skip
    """How much of the hot set stays from the first to the last third of event time.

    The thirds are ``[t0, t0 + span / 3)`` and ``[t1 - span / 3, t1]``, with t0, t1
    the first and last event times and span = t1 - t0; the measure is the module
    docstring's.

    Returns:
        The overlap (None: no key of either third holds ``min_share``), and each
        third's hottest key; all None when the tuples span no time.
    """
    times = np.asarray(event_times_ms, dtype=np.int64)
    if len(times) == 0 or times.max() == times.min():
        return None, None, None
    first_time, last_time = int(times.min()), int(times.max())
    third = (last_time - first_time) / 3
    first = _tuples_per_key(keys[times < first_time + third])
    last = _tuples_per_key(keys[times >= last_time - third])
    p, q = first / first.sum(), last / last.sum()
    hot = [*p.index[:top][p.iloc[:top] >= min_share], *q.index[:top][q.iloc[:top] >= min_share]]
    first_hot, last_hot = str(p.index[0]), str(q.index[0])
    if not hot:
        return None, first_hot, last_hot
    union = list(dict.fromkeys(hot))
    shares = np.array([p.reindex(union, fill_value=0.0), q.reindex(union, fill_value=0.0)])
    return float(shares.min(axis=0).sum() / shares.max(axis=0).sum()), first_hot, last_hot


def peak_share(keys: np.ndarray, event_times_ms: np.ndarray,
               slices: int = PEAK_SLICES) -> tuple[float, str | None]:  # fmt: skip
    """The largest share one key holds of one of ``slices`` equal slices of event time.

    Slices with fewer than 100 tuples are skipped unless every slice has so few
    (the whole stream is then one slice).
    """
    times = np.asarray(event_times_ms, dtype=np.int64)
    if len(times) == 0:
        return 0.0, None
    first, span = int(times.min()), int(times.max()) - int(times.min())
    slice_of = np.minimum((times - first) * slices // max(span, 1), slices - 1)
    found: tuple[float, str | None] = (0.0, None)
    sizes = np.bincount(slice_of, minlength=slices)
    usable = [i for i in range(slices) if sizes[i] >= _PEAK_MIN_TUPLES]
    for index in usable:
        per_key = _tuples_per_key(keys[slice_of == index])
        share = float(per_key.iloc[0] / per_key.sum())
        if share > found[0]:
            found = (share, str(per_key.index[0]))
    if not usable:
        per_key = _tuples_per_key(keys)
        found = (float(per_key.iloc[0] / per_key.sum()), str(per_key.index[0]))
    return found


def skew_profile(keys: np.ndarray, event_times_ms: np.ndarray,
                 workers: Sequence[int]) -> SkewProfile:  # fmt: skip
    """The skew measures of a stream's tuples.

    Args:
        keys: each tuple's key.
        event_times_ms: each tuple's event time (for the drift).
        workers: the W values to count keys over 1/W for.
    """
    per_key = _tuples_per_key(np.asarray(keys, dtype=object))
    total = int(per_key.sum())
    shares = per_key.to_numpy() / total if total else np.empty(0)
    overlap, first_hot, last_hot = drift(np.asarray(keys, dtype=object), event_times_ms)
    peak, peak_key = peak_share(np.asarray(keys, dtype=object), event_times_ms)
    return SkewProfile(
        tuples=total, distinct_keys=len(per_key),
        top_keys=[(str(k), float(s)) for k, s in zip(per_key.index[:10], shares[:10], strict=True)],
        keys_over={w: int((shares > 1.0 / w).sum()) for w in sorted(set(workers))},
        peak_share=peak, peak_key=peak_key, drift=overlap, first_hot=first_hot, last_hot=last_hot,
    )  # fmt: skip
