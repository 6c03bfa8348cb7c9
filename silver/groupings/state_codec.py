"""Grouping state <-> bytes, for the applyInPandasWithState state row.

A state is a flat dataclass of numpy arrays and scalars. It is stored with
``np.savez`` (no pickle), so bytes written by one process load in any other.
"""

from __future__ import annotations

import dataclasses
import io
import zipfile
from typing import Any, TypeVar

import numpy as np

__all__ = ["StateSerializationError", "decode_state", "encode_state"]

S = TypeVar("S")

# What np.load and zipfile raise for damaged archives: a cut archive is BadZipFile or
# EOFError, a changed byte can turn into an unknown compression (NotImplementedError,
# a RuntimeError) or an "encrypted" entry (RuntimeError).
_UNREADABLE = (OSError, EOFError, KeyError, ValueError, RuntimeError, zipfile.BadZipFile)


class StateSerializationError(ValueError):
    """Raised when grouping state cannot be written to or read from bytes."""


def encode_state(state: Any) -> bytes:
    """Serialize a dataclass of arrays and scalars to bytes."""
    try:
        arrays = {f.name: np.asarray(getattr(state, f.name)) for f in dataclasses.fields(state)}
        buffer = io.BytesIO()
        np.savez(buffer, **arrays)
    except (TypeError, ValueError) as exc:
        raise StateSerializationError(f"cannot serialize {type(state).__name__}: {exc}") from exc
    return buffer.getvalue()


def decode_state(state_type: type[S], data: bytes) -> S:
    """Rebuild a state dataclass written by :func:`encode_state`."""
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as stored:
            values: dict[str, Any] = {}
            for field in dataclasses.fields(state_type):  # type: ignore[arg-type]
                value = stored[field.name]
                values[field.name] = value.item() if value.ndim == 0 else value.copy()
    except _UNREADABLE as exc:
        raise StateSerializationError(f"cannot restore {state_type.__name__}: {exc}") from exc
    return state_type(**values)
