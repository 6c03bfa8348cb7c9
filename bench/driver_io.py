"""Bytes of table data that reach the driver process, counted where they arrive.

Socket reads do not show in ``/proc/<pid>/io`` (``recv`` bypasses its counters),
so the benchmark counts data where the driver takes it in instead: Spark results
collected to Python (``DataFrame.collect``, ``toArrow``, ``toPandas``) and Delta or
Parquet data read by the driver itself (delta-rs and pyarrow readers). Executors
run in other processes and are not counted.
"""

from __future__ import annotations

import functools
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["DriverBytes", "counting_driver_bytes"]


class DriverBytes:
    """Bytes taken in by the driver, per way in."""

    def __init__(self) -> None:
        self.by_source: dict[str, int] = {}
        self._lock = threading.Lock()

    def add(self, source: str, nbytes: int) -> None:
        with self._lock:
            self.by_source[source] = self.by_source.get(source, 0) + int(nbytes)

    @property
    def total(self) -> int:
        return sum(self.by_source.values())

    def megabytes(self) -> dict[str, float]:
        return {k: round(v / 1e6, 2) for k, v in sorted(self.by_source.items())}


def _row_bytes(rows: list[Any]) -> int:
    total = 0
    for row in rows:
        for value in row:
            total += len(value) if isinstance(value, bytes | str) else sys.getsizeof(value) if isinstance(value, list | dict) else 8
    return total


def _frame_bytes(frame: Any) -> int:
    return int(frame.memory_usage(index=False, deep=True).sum())


def _wrap(owner: Any, name: str, source: str, size: Callable[[Any], int], counter: DriverBytes) -> Callable[[], None]:
    original = getattr(owner, name)

    @functools.wraps(original)
    def counted(*args: Any, **kwargs: Any) -> Any:
        result = original(*args, **kwargs)
        counter.add(source, size(result))
        return result

    setattr(owner, name, counted)
    return lambda: setattr(owner, name, original)


@contextmanager
def counting_driver_bytes() -> Iterator[DriverBytes]:
    """Count, until the block ends, the table bytes this process takes in."""
    import pyarrow.parquet as pq
    from deltalake import DeltaTable
    from pyspark.sql.classic.dataframe import DataFrame

    counter = DriverBytes()
    restore = [
        _wrap(DataFrame, "collect", "spark_collect", _row_bytes, counter),
        _wrap(DataFrame, "toArrow", "spark_collect", lambda t: t.nbytes, counter),
        _wrap(DataFrame, "toPandas", "spark_collect", _frame_bytes, counter),
        _wrap(DeltaTable, "to_pyarrow_table", "table_read", lambda t: t.nbytes, counter),
        _wrap(pq, "read_table", "table_read", lambda t: t.nbytes, counter),
        _wrap(pq.ParquetFile, "read", "table_read", lambda t: t.nbytes, counter),
    ]
    try:
        yield counter
    finally:
        for undo in reversed(restore):
            undo()
