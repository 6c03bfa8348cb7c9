"""What a Kafka record's metadata must hold for the pipeline to carry it.

A malformed *payload* becomes a ``silver.quarantine`` row. A record's Kafka
timestamp cannot: bronze keeps it as a timestamp column, which its readers'
tools (a ``toPandas()``, a pandas-backed check) hold as pandas nanoseconds,
ending in April 2262. A producer that writes microseconds (or nanoseconds)
where Kafka expects milliseconds lands far past that, and whatever read it would
fail with pandas' ``OutOfBoundsDatetime`` and no word of which record. So
readers check the timestamps they read and name the record.
"""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa
import pyarrow.compute as pc

from core.kafka.admin import BrokerError

__all__ = ["MAX_TIMESTAMP_MS", "MIN_TIMESTAMP_MS", "check_timestamps"]

MAX_TIMESTAMP_MS = (2**63 - 1) // 1_000_000
"""The latest Kafka timestamp (epoch ms) pandas' nanosecond timestamps hold: 2262-04-11."""

MIN_TIMESTAMP_MS = -MAX_TIMESTAMP_MS
"""The earliest (1677-09-21); Kafka's "no timestamp" (-1) is well inside."""


def check_timestamps(topic: str, partition: int, offsets: Sequence[int],
                     timestamps_ms: pa.Array | Sequence[int]) -> None:  # fmt: skip
    """Fail on the first record whose Kafka timestamp the pipeline cannot hold.

    Runs on executors and on the driver alike; the common case is one Arrow
    ``min_max`` over a poll's timestamps (int64), well under a millisecond for
    50,000 of them.

    Raises:
        BrokerError: naming the topic, partition, offset and timestamp.
    """
    millis = timestamps_ms if isinstance(timestamps_ms, pa.Array) else pa.array(timestamps_ms,
                                                                                 pa.int64())
    if len(millis) == 0:
        return
    bounds = pc.min_max(millis)
    if MIN_TIMESTAMP_MS <= bounds["min"].as_py() and bounds["max"].as_py() <= MAX_TIMESTAMP_MS:
        return
    index, stamp = next((i, t) for i, t in enumerate(millis.to_pylist())
                        if not MIN_TIMESTAMP_MS <= t <= MAX_TIMESTAMP_MS)  # fmt: skip
    raise BrokerError(
        f"{topic}[{partition}] offset {offsets[index]}: its Kafka timestamp {stamp} ms is outside "
        "the years 1677-2262 the pipeline's timestamps hold (a producer that set microseconds "
        "as milliseconds?); unlike a malformed payload it cannot be quarantined: fix the "
        "producer and write the data to a new --topic"
    )
