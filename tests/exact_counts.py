"""The exact-count check every end-to-end test makes: gold's key counts against the generator's.

The expected side comes from the dataset generators themselves, the actual side
from ``gold.key_counts`` read with delta-rs directly, not through the project's
table backend.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from deltalake import DeltaTable

from bronze.datasets.base import DatasetSpec
from bronze.datasets.registry import make_dataset

__all__ = ["dataset_counts", "gold_counts"]


def dataset_counts(specs: Iterable[DatasetSpec]) -> Counter:
    """The generators' own key counts of these datasets, added up."""
    counts: Counter = Counter()
    for spec in specs:
        for batch in make_dataset(spec).tuples(batch_size=10_000):
            for key, count in zip(batch.keys, batch.counts.tolist(), strict=True):
                counts[key] += count
    return counts


def gold_counts(root: str | Path, options: dict[str, str] | None = None) -> dict[str, Counter]:
    """Per run id: the key counts of ``gold.key_counts``, summed over windows."""
    counts = DeltaTable(f"{root}/gold/key_counts", storage_options=options).to_pandas()
    return {run_id: Counter(dict(rows.groupby("key")["count"].sum().astype(int)))
            for run_id, rows in counts.groupby("run_id")}  # fmt: skip
