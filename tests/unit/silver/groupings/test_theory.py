"""Balance on Zipf streams against the known approximations."""

from __future__ import annotations

import numpy as np
import pytest

from silver.groupings.key import KeyGrouping
from silver.groupings.partial_key import PartialKeyGrouping
from tests.unit.silver.groupings.conftest import zipf_stream


def _imbalance(routed: np.ndarray, workers: int) -> float:
    loads = np.bincount(routed, minlength=workers)
    return float((loads.max() - loads.mean()) / loads.sum())


@pytest.mark.parametrize(("exponent", "workers"), [(1.4, 50), (2.0, 20), (1.8, 100)])
def test_key_grouping_imbalance_is_near_p1_minus_one_over_w(exponent, workers):
    keys, times, p = zipf_stream(200_000, exponent=exponent, keys=10_000, seed=1)
    observed = _imbalance(KeyGrouping(workers).route(keys, times), workers)
    # The hot key's worker also hosts its share of the other keys, hence the tolerance.
    assert observed == pytest.approx(p[0] - 1 / workers, abs=0.03)


@pytest.mark.parametrize(("exponent", "workers"), [(1.4, 50), (2.0, 20), (2.0, 50)])
def test_partial_key_imbalance_is_near_half_p1_minus_one_over_w(exponent, workers):
    keys, times, p = zipf_stream(200_000, exponent=exponent, keys=10_000, seed=2)
    observed = _imbalance(PartialKeyGrouping(workers).route(keys, times), workers)
    assert observed == pytest.approx(max(0.0, p[0] / 2 - 1 / workers), abs=0.02)
