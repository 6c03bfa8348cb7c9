"""The malformed mix: clean messages untouched, malformed ones of every kind, counts exact."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from bronze.datasets.base import DatasetSpec
from bronze.datasets.chunked import CHUNK_MESSAGES
from bronze.datasets.malformed import MALFORMED_KINDS, MalformedMix
from bronze.datasets.registry import make_dataset
from silver.parsers.registry import ParseError, batch_parser_for, parser_for

CLEAN = 3 * CHUNK_MESSAGES + 123


def _mix(malformed: int, seed: int = 5) -> MalformedMix:
    return MalformedMix(
        make_dataset(DatasetSpec(name="ZIPF", messages=CLEAN, seed=3)), malformed, seed
    )


def _flat(mix: MalformedMix, batch_size: int) -> tuple[list[bytes], list[bytes | None], list[int]]:
    batches = list(mix.messages(batch_size))
    return ([k for b in batches for k in b.keys], [p for b in batches for p in b.payloads],
            np.concatenate([b.timestamps_ms for b in batches]).tolist())  # fmt: skip


def _reason(payload: bytes | None, stamp: int) -> str | None:
    """The per-message parser's verdict, as silver.parsing gives it (tombstones included)."""
    if payload is None:
        return "null_value"
    try:
        parser_for("ZIPF")(payload, stamp)
    except ParseError as exc:
        return exc.reason
    return None


@pytest.mark.parametrize("malformed", [0, 1, len(MALFORMED_KINDS) * 20 + 7])
def test_the_parser_quarantines_exactly_the_counts_the_mix_declares(malformed):
    mix = _mix(malformed)
    _, payloads, stamps = _flat(mix, 10_000)
    reasons = [_reason(p, s) for p, s in zip(payloads, stamps, strict=True)]
    assert len(payloads) == CLEAN + malformed
    assert Counter(r for r in reasons if r is not None) == +mix.expected_reasons()
    assert sum(mix.expected_reasons().values()) == malformed
    clean = [b for batch in mix.clean.messages(10_000) for b in batch.payloads]
    assert [p for p, r in zip(payloads, reasons, strict=True) if r is None] == clean
    # The batch parser, which the pipeline runs, agrees message by message.
    batch = batch_parser_for("ZIPF")(payloads, np.asarray(stamps))
    assert batch.errors.tolist() == reasons


def test_every_kind_is_present_and_spread_over_the_stream():
    mix = _mix(len(MALFORMED_KINDS) * 10)
    assert set(mix.expected_reasons()) == set(MALFORMED_KINDS)
    _, payloads, stamps = _flat(mix, 10_000)
    bad = [i for i, (p, s) in enumerate(zip(payloads, stamps, strict=True)) if _reason(p, s)]
    quarter = len(payloads) // 4
    assert all(any(q * quarter <= i < (q + 1) * quarter for i in bad) for q in range(4))


def test_same_seed_same_stream_whatever_the_batch_size_and_seeds_differ():
    mix = _mix(300)
    assert _flat(mix, 10_000) == _flat(mix, 777)
    assert _flat(mix, 10_000) == _flat(_mix(300), 10_000)
    assert _flat(mix, 10_000)[1] != _flat(_mix(300, seed=6), 10_000)[1]


def test_tuples_are_the_clean_datasets():
    mix = _mix(50)
    got = np.concatenate([b.keys for b in mix.tuples(10_000)])
    assert got.tolist() == np.concatenate([b.keys for b in mix.clean.tuples(10_000)]).tolist()
