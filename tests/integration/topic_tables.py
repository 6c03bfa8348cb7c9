"""A Delta table with Kafka's columns standing in for a topic (finite runs without a broker)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pyarrow as pa

from bronze.datasets.base import DatasetSpec
from bronze.datasets.registry import make_dataset
from core.tables import DeltaRsBackend

__all__ = ["write_topic_table"]


def write_topic_table(path: Path, spec: DatasetSpec, partitions: int) -> Counter:
    """Write the dataset's messages dealt round-robin over partitions; returns exact key counts."""
    dataset = make_dataset(spec)
    batch = next(dataset.messages(batch_size=spec.messages))
    table = pa.table({
        "key": batch.keys, "value": batch.payloads, "topic": ["countries"] * spec.messages,
        "partition": pa.array(np.arange(spec.messages) % partitions, pa.int32()),
        "offset": pa.array(np.arange(spec.messages) // partitions, pa.int64()),
        "timestamp": pa.array(batch.timestamps_ms * 1000, pa.timestamp("us", tz="UTC")),
    })  # fmt: skip
    DeltaRsBackend().append(str(path), table, "topic", 0)
    exact: Counter = Counter()
    for tuples in dataset.tuples(batch_size=spec.messages):
        for key, count in zip(tuples.keys, tuples.counts, strict=True):
            exact[key] += int(count)
    return exact
