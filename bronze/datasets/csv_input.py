"""Tuples from a CSV file (``--input`` of ``dkg simulate``, ``produce``, ``run``, ``advise``): ``key,count,timestamp_ms``.

The header row is optional: a first row that reads ``key,count,timestamp_ms``
(any case, surrounding spaces ignored) is skipped; any other first row is data.
Blank lines are skipped. Every bad line stops the read with a
:class:`CsvInputError` naming the file and its 1-based line number, because a
silently dropped line would skew the very distribution being studied.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from bronze.datasets.base import MessageBatch, TupleBatch
from bronze.datasets.keyed import keyed_json
from core.errors import DkgError

__all__ = ["HEADER", "CsvInputError", "CsvMessages", "read_csv_tuples"]

HEADER = ("key", "count", "timestamp_ms")
_INTEGER = re.compile(r"[+-]?[0-9]+")
_INT64_MAX = (1 << 63) - 1


class CsvInputError(DkgError, ValueError):
    """The CSV input is missing, unreadable or has a bad line."""


def read_csv_tuples(path: str | Path, batch_size: int = 10_000) -> Iterator[TupleBatch]:
    """Read ``key,count,timestamp_ms`` rows as tuple batches, in file order.

    Args:
        path: the CSV file (UTF-8).
        batch_size: rows per batch (the last batch may be shorter).

    Returns:
        An iterator of batches; a bad line raises when the read reaches it.

    Raises:
        CsvInputError: the file is missing (raised at once) or a line is bad.
    """
    path = Path(path)
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    if not path.is_file():
        what = "is not a file" if path.exists() else "does not exist"
        raise CsvInputError(f"input file {str(path)!r} {what}")
    return _read(path, batch_size)


def _read(path: Path, batch_size: int) -> Iterator[TupleBatch]:
    keys: list[str] = []
    counts: list[int] = []
    stamps: list[int] = []
    line, first_row = 0, True
    try:
        with path.open(newline="", encoding="utf-8") as handle:
            reader = csv.reader(handle)
            for row in reader:
                line = reader.line_num
                if not row:
                    continue
                if first_row:
                    first_row = False
                    if _is_header(row):
                        continue
                key, count, stamp = _parse_row(row, path, line)
                keys.append(key)
                counts.append(count)
                stamps.append(stamp)
                if len(keys) == batch_size:
                    yield _batch(keys, counts, stamps)
                    keys, counts, stamps = [], [], []
    except UnicodeDecodeError as exc:
        raise CsvInputError(f"{path}: not UTF-8 text after line {line}") from exc
    except csv.Error as exc:
        raise CsvInputError(f"{path}, line {line + 1}: {exc}") from exc
    except OSError as exc:
        raise CsvInputError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    if keys:
        yield _batch(keys, counts, stamps)


def _is_header(row: list[str]) -> bool:
    return tuple(field.strip().lower() for field in row) == HEADER


def _parse_row(row: list[str], path: Path, line: int) -> tuple[str, int, int]:
    def fail(problem: str) -> CsvInputError:
        return CsvInputError(f"{path}, line {line}: {problem}")

    if len(row) != len(HEADER):
        raise fail(f"expected 3 fields (key,count,timestamp_ms), found {len(row)}")
    key, count_text, stamp_text = row
    if not key.strip():
        raise fail("empty key")
    count, stamp = _int64(count_text), _int64(stamp_text)
    if count is None or count < 1:
        raise fail(f"count {_shown(count_text)} is not a positive integer")
    if stamp is None:
        raise fail(f"timestamp_ms {_shown(stamp_text)} is not an integer")
    return key, count, stamp


def _int64(text: str) -> int | None:
    """A decimal integer of magnitude at most int64's max, or None."""
    text = text.strip()
    if not _INTEGER.fullmatch(text):
        return None
    # int() refuses strings of more than 4300 digits (a ValueError): drop leading zeros,
    # and no longer number fits int64.
    digits = text.lstrip("+-").lstrip("0") or "0"
    if len(digits) > 19:
        return None
    value = -int(digits) if text.startswith("-") else int(digits)
    return value if abs(value) <= _INT64_MAX else None


def _shown(text: str) -> str:
    text = text.strip()
    return repr(text) if len(text) <= 40 else f"{text[:40]!r}... ({len(text)} characters)"


def _batch(keys: list[str], counts: list[int], stamps: list[int]) -> TupleBatch:
    key_array = np.empty(len(keys), dtype=object)
    key_array[:] = keys
    return TupleBatch(key_array, np.array(counts, dtype=np.int64), np.array(stamps, dtype=np.int64))


class CsvMessages:
    """A CSV file's tuples as keyed-JSON messages, one per row: what the job produces of it.

    The Kafka key is the tuple's key and the Kafka timestamp its ``timestamp_ms``, as the
    generated datasets have them, so silver parses the file's rows back exactly.

    Args:
        path: the CSV file.

    Raises:
        CsvInputError: the file is missing or has a bad line (read once here, to count its rows).
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.tuples = sum(len(batch) for batch in read_csv_tuples(self.path))
        if self.tuples == 0:
            raise CsvInputError(f"input file {str(self.path)!r} holds no rows")

    def messages(self, batch_size: int = 10_000) -> Iterator[MessageBatch]:
        """The rows as messages, ``batch_size`` at a time, in file order."""
        for batch in read_csv_tuples(self.path, batch_size):
            keys = batch.keys.tolist()
            payloads: list[bytes | None] = [
                keyed_json(key, count, stamp)
                for key, count, stamp in zip(keys, batch.counts.tolist(),
                                             batch.event_times_ms.tolist(), strict=True)]  # fmt: skip
            yield MessageBatch([key.encode() for key in keys], payloads, batch.event_times_ms)
