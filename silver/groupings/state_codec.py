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

__all__ = ["StateSerializationError", "check_layout", "decode_state", "encode_state"]

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


def _layout(value: Any) -> tuple[str, int]:
    array = np.asarray(value)
    # Text arrays grow their item size with the longest string: only the kind is fixed.
    kind = array.dtype.kind if array.dtype.kind in "SU" else array.dtype.str
    return kind, array.ndim


def check_layout(state: Any, template: Any) -> None:
    """Refuse a decoded state whose fields differ in type or dimensions from ``template``'s.

    A snapshot of another grouping or another version can hold readable arrays of
    the wrong kind; the compiled kernels index them unchecked, so they must not run.

    Raises:
        StateSerializationError: a field's dtype or number of dimensions differs.
    """
    for field in dataclasses.fields(template):
        got, want = _layout(getattr(state, field.name)), _layout(getattr(template, field.name))
        if got != want:
            raise StateSerializationError(
                f"cannot restore {type(template).__name__}: field {field.name} is "
                f"{got[0]} with {got[1]} dimensions, expected {want[0]} with {want[1]}"
            )
