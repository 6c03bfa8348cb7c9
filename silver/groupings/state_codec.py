"""Grouping state <-> bytes, for the applyInPandasWithState state row.

A state is a flat dataclass of numpy arrays and scalars. It is stored as an
``.npz`` archive (no pickle), so bytes written by one process load in any other,
``np.load`` included; :func:`decode_state` reads the members with ``zipfile`` and
parses each distinct ``.npy`` header once.

:func:`encode_state` writes the archive with ``zipfile`` rather than through
``np.savez``: the routing step snapshots once per batch, and ``np.savez`` spent
most of its time formatting each field's ``.npy`` header. Here the headers are
cached per dtype and shape (DYNAMIC_KEY's 24 fields: 425 → 220 µs per snapshot).
The archive holds the same members, stored uncompressed as ``np.savez`` stores
them, with a fixed timestamp, so the same state always gives the same bytes.
"""

from __future__ import annotations

import dataclasses
import io
import zipfile
from typing import Any, TypeVar

import numpy as np

from core.errors import DkgError

__all__ = ["StateSerializationError", "check_layout", "decode_state", "encode_state"]

S = TypeVar("S")

# What np.load and zipfile raise for damaged archives: a cut archive is BadZipFile or
# EOFError, a changed byte can turn into an unknown compression (NotImplementedError,
# a RuntimeError) or an "encrypted" entry (RuntimeError).
_UNREADABLE = (OSError, EOFError, KeyError, ValueError, RuntimeError, zipfile.BadZipFile)


class StateSerializationError(DkgError, ValueError):
    """Raised when grouping state cannot be written to or read from bytes."""


def encode_state(state: Any) -> bytes:
    """Serialize a dataclass of arrays and scalars to ``.npz`` bytes."""
    try:
        members = [(f.name, _array(getattr(state, f.name))) for f in dataclasses.fields(state)]
        return _npz(members)
    except (TypeError, ValueError) as exc:
        raise StateSerializationError(f"cannot serialize {type(state).__name__}: {exc}") from exc


def _array(value: Any) -> np.ndarray:
    array = np.asarray(value)
    if array.dtype.hasobject:
        raise TypeError("object arrays would need pickle")
    return array if array.flags.c_contiguous else array.copy(order="C")


_headers: dict[tuple[np.dtype, tuple[int, ...]], bytes] = {}
_DATE = (1980, 1, 1, 0, 0, 0)  # the earliest a zip entry can carry: the same bytes every time


def _npy_header(array: np.ndarray) -> bytes:
    # np.save's own header (format 1.0), formatted once per dtype and shape.
    key = (array.dtype, array.shape)
    header = _headers.get(key)
    if header is None:
        if len(_headers) >= 4096:  # name arrays change width and length: keep the cache bounded
            _headers.clear()
        buffer = io.BytesIO()
        np.lib.format.write_array_header_1_0(
            buffer, np.lib.format.header_data_from_array_1_0(array)
        )
        header = _headers[key] = buffer.getvalue()
    return header


def _npz(members: list[tuple[str, np.ndarray]]) -> bytes:
    """A zip archive of ``<name>.npy`` members, stored (the layout ``np.savez`` writes)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, array in members:
            archive.writestr(zipfile.ZipInfo(f"{name}.npy", _DATE),
                             _npy_header(array) + array.tobytes())  # fmt: skip
    return buffer.getvalue()


_parsed_headers: dict[bytes, tuple[np.dtype, tuple[int, ...], int]] = {}


def _npy_array(member: bytes) -> np.ndarray:
    """The array of one ``.npy`` member (format 1.0, as :func:`encode_state` writes it).

    Headers are parsed once per distinct header: ``np.load`` evaluates each one as
    Python literal text, which was most of a restore's time.
    """
    if member[:8] != b"\x93NUMPY\x01\x00":
        raise ValueError("not a .npy member of format 1.0")
    end = 10 + int.from_bytes(member[8:10], "little")
    header = member[:end]
    parsed = _parsed_headers.get(header)
    if parsed is None:
        if len(_parsed_headers) >= 4096:  # name arrays change width and length
            _parsed_headers.clear()
        stream = io.BytesIO(header)
        np.lib.format.read_magic(stream)
        shape, fortran, dtype = np.lib.format.read_array_header_1_0(stream)
        if fortran or dtype.hasobject:
            raise ValueError("only C-ordered arrays without objects are stored")
        parsed = _parsed_headers[header] = (dtype, shape, int(np.prod(shape)))
    dtype, shape, count = parsed
    return np.frombuffer(member, dtype, count, end).reshape(shape).copy()


def decode_state(state_type: type[S], data: bytes) -> S:
    """Rebuild a state dataclass written by :func:`encode_state`."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            values: dict[str, Any] = {}
            for field in dataclasses.fields(state_type):  # type: ignore[arg-type]
                value = _npy_array(archive.read(f"{field.name}.npy"))
                values[field.name] = value.item() if value.ndim == 0 else value
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
