"""The order of a finite run's steps and gates, which the crash harness aims its kills by."""

from __future__ import annotations

import pytest

from pipelines.medallion import gated_steps


@pytest.mark.parametrize(("steps", "gated"), [
    # Silver's query lands bronze as it reads Kafka: both layers are checked after it.
    (("silver", "gold"), ("silver", "bronze checks", "silver checks", "gold", "gold checks")),
    (("bronze", "silver", "gold"),
     ("bronze", "bronze checks", "silver", "silver checks", "gold", "gold checks")),
])  # fmt: skip
def test_gates_follow_each_step_for_the_layers_it_completed(steps, gated):
    assert gated_steps(steps) == gated
