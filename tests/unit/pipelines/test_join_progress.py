"""``dkg join``'s production bars end at their true total: lefts, their partners, heartbeats."""

from __future__ import annotations

import io

import numpy as np
import pytest

import pipelines.join_pipeline as join_pipeline
from bronze.join_data import JoinDataSpec
from pipelines.join_pipeline import JoinRequest, run_join
from pipelines.progress import ProgressReporter
from silver.join.engine import JoinParams


def _partners(spec: JoinDataSpec) -> int:
    """Lefts with a right partner, drawn as the generator draws them (its seed's first draw)."""
    return int((np.random.default_rng(spec.seed).random(spec.lefts) < spec.match_ratio).sum())


class _Bars:
    """Every production bar of a run, with what it was told at its end."""

    def __init__(self) -> None:
        self.ended: list[tuple[str, int | None, int]] = []

    def __call__(self, total: int | None, **options) -> ProgressReporter:
        bars = self

        class _Recorded(ProgressReporter):
            def close(self, failed: bool = False) -> None:
                bars.ended.append((self.label, self.total, self.done))
                super().close(failed)

        return _Recorded(total, stream=io.StringIO(), **options)


@pytest.fixture
def fake_kafka(monkeypatch):
    """Topics as counts; the real ``ensure_phase`` and ``run_join`` over them, no drain."""
    held: dict[str, int] = {}

    def produce_phase(records, client, topics, partitions, progress=None):
        sides = records["side"].tolist()
        for sent in range(1, len(sides) + 1):
            held[topics[sides[sent - 1]]] = held.get(topics[sides[sent - 1]], 0) + 1
            if progress is not None and sent % 1_000 == 0:
                progress(sent)
        if progress is not None:
            progress(len(sides))
        return len(sides)

    bars = _Bars()
    monkeypatch.setattr(join_pipeline, "produce_phase", produce_phase)
    monkeypatch.setattr(join_pipeline, "_total", lambda client, topic: held.get(topic, 0))
    monkeypatch.setattr(join_pipeline, "_drain", lambda *args: 1.0)
    monkeypatch.setattr(join_pipeline, "refresh_join_gold", lambda *args: {})
    monkeypatch.setattr(join_pipeline, "ProgressReporter", bars)
    return held, bars


@pytest.mark.parametrize("spec", [
    JoinDataSpec(lefts=5_000, match_ratio=0.9, partitions=4),
    JoinDataSpec(lefts=5_000, match_ratio=0.5, partitions=2, seed=7),
    JoinDataSpec(lefts=3_000, match_ratio=0.9, partitions=4, stall_partition=1),  # two phases
    JoinDataSpec(lefts=2_000, match_ratio=1.0, partitions=3),
])  # fmt: skip
def test_each_production_bar_ends_at_the_messages_the_generator_made(fake_kafka, spec):
    held, bars = fake_kafka
    request = JoinRequest(spec, ("left", "right"), None, JoinParams())
    run_join(None, request, None, None)
    partners, heartbeats = _partners(spec), 2 * spec.partitions
    assert sum(held.values()) == spec.lefts + partners + heartbeats
    assert [done for _, _, done in bars.ended] == [total for _, total, _ in bars.ended]  # 100 %
    assert sum(total for _, total, _ in bars.ended) == spec.lefts + partners + heartbeats
    assert partners == pytest.approx(spec.lefts * spec.match_ratio, abs=4 * np.sqrt(spec.lefts))
    phases = 2 if spec.stall_partition is not None else 1
    assert [label for label, _, _ in bars.ended] == [f"producing phase {p + 1}/{phases}"
                                                     for p in range(phases)]  # fmt: skip


def test_topics_that_hold_the_data_already_produce_nothing(fake_kafka):
    held, bars = fake_kafka
    request = JoinRequest(JoinDataSpec(lefts=1_000), ("left", "right"), None, JoinParams())
    run_join(None, request, None, None)
    before = dict(held)
    run_join(None, request, None, None)
    assert held == before and bars.ended[-1][2] == 0
