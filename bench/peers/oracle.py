"""The expected answer: messages per key per 60 s window, counted from the generator itself.

Independent of every system measured: it reads the dataset's own tuples
(:meth:`bronze.datasets.base.Dataset.tuples`), not the topic. A result that is
fast but wrong then shows as a mismatch, and its speed is not compared.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from bronze.datasets.base import DatasetSpec
from bronze.datasets.registry import make_dataset

__all__ = ["WINDOW_MS", "check", "expected_counts"]

WINDOW_MS = 60_000
_COLUMNS = ["window_start_ms", "key", "count"]


def expected_counts(spec: DatasetSpec) -> pd.DataFrame:
    """``window_start_ms``, ``key``, ``count``: messages per epoch-aligned window and key."""
    batches = list(make_dataset(spec).tuples(batch_size=100_000))
    # Its own window arithmetic, not core.windows': the oracle checks the pipeline's
    # gold.key_counts too, so it must not share the code it checks.
    frame = pd.DataFrame({
        "window_start_ms": pd.concat([pd.Series(b.event_times_ms // WINDOW_MS * WINDOW_MS)
                                      for b in batches], ignore_index=True),
        "key": pd.concat([pd.Series(b.keys) for b in batches], ignore_index=True),
    })  # fmt: skip
    return frame.groupby(["window_start_ms", "key"]).size().rename("count").reset_index()


def check(result: pd.DataFrame, expected: pd.DataFrame) -> dict[str, Any]:
    """How ``result`` (same columns as the oracle) differs from ``expected``.

    Returns:
        ``correct`` (every window and key once, with the right count, nothing more),
        ``rows`` and ``expected_rows``, ``wrong_rows`` (missing, extra or miscounted),
        ``messages`` (the counts' sum).
    """
    result = result[_COLUMNS].astype({"window_start_ms": "int64", "key": str, "count": "int64"})
    both = expected.merge(result, on=["window_start_ms", "key"], how="outer",
                          suffixes=("_expected", "_got"), indicator=True)  # fmt: skip
    wrong = int(((both["_merge"] != "both") | (both["count_expected"] != both["count_got"])).sum())
    return {"correct": wrong == 0 and len(result) == len(expected), "rows": len(result), "expected_rows": len(expected),
            "wrong_rows": wrong, "messages": int(result["count"].sum())}  # fmt: skip
