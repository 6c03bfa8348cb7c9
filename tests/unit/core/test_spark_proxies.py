"""Cycle collection between micro-batches: what a reference cycle holds is freed, on schedule."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from core.gc_pause import gc_paused
from core.spark.proxies import releasing_proxies


class _Proxy:
    """Stands for a py4j proxy: it and its cached method point at each other."""

    def __init__(self) -> None:
        self.methods = {"call": self}


@pytest.fixture
def no_automatic_collection() -> Iterator[None]:
    # Only the writer's own collection may free a cycle during the test.
    with gc_paused():
        yield


def _cycle() -> weakref.ref[_Proxy]:
    return weakref.ref(_Proxy())


@pytest.mark.usefixtures("no_automatic_collection")
def test_a_due_collection_frees_the_cycles_of_earlier_batches() -> None:
    calls: list[tuple[object, int]] = []
    write = releasing_proxies(lambda df, batch_id: calls.append((df, batch_id)), every_s=0.0)
    proxy = _cycle()
    assert proxy() is not None  # reference counting alone does not free a cycle
    write("frame", 7)
    assert calls == [("frame", 7)]
    assert proxy() is None


@pytest.mark.usefixtures("no_automatic_collection")
def test_no_collection_before_it_is_due() -> None:
    write = releasing_proxies(lambda df, batch_id: None, every_s=3600.0)
    proxy = _cycle()
    write("frame", 1)
    assert proxy() is not None
    gc.collect()
    assert proxy() is None
