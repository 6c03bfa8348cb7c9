"""A join with a stalled partition started again after its last phase was produced goes on."""

from __future__ import annotations

import pytest

from bronze.join_data import JoinDataSpec, generate
from core.kafka.admin import BrokerError, end_offsets
from pipelines.join_pipeline import JoinRequest, ensure_phase, generated_topics
from silver.join import JoinParams

SPEC = JoinDataSpec(lefts=300, rate=1_000, partitions=2, stall_partition=1, seed=3)


def _held(request: JoinRequest) -> list[dict[int, int]]:
    return [end_offsets(request.client, topic) for topic in request.topics]


def test_topics_holding_a_later_phase_hold_the_earlier_one(join_kafka):
    request = JoinRequest(SPEC, generated_topics(SPEC), join_kafka, JoinParams())
    data = generate(SPEC)
    assert data.phases == 2
    produced = [ensure_phase(request, data, phase) for phase in range(data.phases)]
    assert all(produced) and sum(produced) == len(data.records)
    held = _held(request)
    # As a run started again after a kill in phase 1's drain asks, phase by phase.
    assert [ensure_phase(request, data, phase) for phase in range(data.phases)] == [0, 0]
    assert _held(request) == held


def test_topics_holding_other_data_are_refused(join_kafka):
    spec = JoinDataSpec(lefts=300, rate=1_000, partitions=2, stall_partition=1, seed=4)
    other = JoinDataSpec(lefts=200, rate=1_000, partitions=2, stall_partition=1, seed=4)
    request = JoinRequest(spec, generated_topics(spec), join_kafka, JoinParams())
    ensure_phase(JoinRequest(other, request.topics, join_kafka, JoinParams()), generate(other), 0)
    with pytest.raises(BrokerError, match="matches no phase"):
        ensure_phase(request, generate(spec), 0)
