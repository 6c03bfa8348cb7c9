"""Hypothesis strategies several property tests share."""

from __future__ import annotations

from hypothesis import strategies as st

__all__ = ["damaged"]


@st.composite
def damaged(draw: st.DrawFn, originals: st.SearchStrategy[bytes]) -> bytes:
    """One of ``originals`` cut short, or with one to four bytes replaced."""
    data = draw(originals)
    if not data:
        return data
    if draw(st.booleans()):
        return data[: draw(st.integers(0, len(data) - 1))]
    changed = bytearray(data)
    for _ in range(draw(st.integers(1, 4))):
        changed[draw(st.integers(0, len(data) - 1))] = draw(st.integers(0, 255))
    return bytes(changed)
