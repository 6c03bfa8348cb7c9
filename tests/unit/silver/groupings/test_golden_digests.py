"""The default rule (DYNAMIC_KEY as conf/base.yaml sets it) routes fixed streams exactly as pinned.

A change to the adaptive rule, its hashing, its parameters' defaults or its state
shows here as another digest, even one that keeps every behavioural bound. The
balance figures beside each digest are computed here from the routing alone (loads
and distinct key-worker pairs), so a reader sees what a deliberate change moved.
Update the pins only for a change meant to route differently, and say so.
"""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from core.config import load_settings
from silver.groupings.registry import make_grouping
from tests.unit.silver.groupings.conftest import zipf_stream

BATCH = 10_000

# workers, Zipf exponent -> routing digest, final snapshot digest, imbalance, dist_cost
# (200,000 tuples over 5,000 keys, one splitter, batches of 10,000). Re-pinned 2026-11-28 for
# the hashed defaults of that date (100 ms checks, overload above 1.5e-4, slack 0).
PINNED = {
    (10, 1.4): ("94b6f1c18723adc8dd2a50728cfb74debf0c28a17836dd09fafe8bbb2f833272",
                "7f97010ced03454a28f052aa38dfc794120dcaedb28abd2ac0424b2e54b39b23", 5e-06, 1.0077),
    (50, 1.1): ("4f4c289250975eb278c0c1e21f6123460e81edff521f34732aed1b7a6c31d553",
                "8648c757ee0954fac3be4b06f2b3354931e2326862dba137cfdfe3cc78a9be4b", 1e-05, 1.0327),
}  # fmt: skip
# The default from 2026-11-26 to 2026-11-28 (hashed placement with 500 ms checks, overload
# above 8e-4 of the stream, workers up to 2 % above the mean), by its parameters: the pins
# the default had then.
BEFORE_2026_11_28 = {"check_interval_ms": 500, "overload_share": 8e-4, "placement_slack": 0.02}
PINNED_BEFORE = {
    (10, 1.4): ("1c1574afef3afbbc74629bb1599036714a1843ea07ca9fcdb837e85c049e1ec4",
                "1bb64da82dc39d384af215f3e5e60080b8f5fb4e45c162a06e92d3f65d4efdac", 5e-06, 1.0082),
    (50, 1.1): ("88d8bdda4ca2bb5e9cbc4dd801c3986ee8ef572d0b7e07d2b7508336e9b70000",
                "12d90ff6bff2c557d968736ed077b08b5ebbf6f940ab7e9a28fa22bf4f89c8f2", 4e-04, 1.0248),
}  # fmt: skip
CASES = [(w, z, False) for w, z in sorted(PINNED)] + [(w, z, True) for w, z in sorted(PINNED_BEFORE)]


@pytest.mark.parametrize(("workers", "exponent", "before"), CASES)
def test_the_default_rule_routes_as_pinned(workers, exponent, before):
    params = load_settings(env={}).settings.grouping_params("DYNAMIC_KEY")
    if before:
        params = {**params, **BEFORE_2026_11_28}
    keys, times, _ = zipf_stream(200_000, exponent=exponent, keys=5000, seed=42, rate=2000)
    grouping = make_grouping("DYNAMIC_KEY", workers, params)
    routed = np.concatenate([np.asarray(grouping.route(keys[i:i + BATCH], times[i:i + BATCH]),
                                        dtype=np.int64) for i in range(0, len(keys), BATCH)])  # fmt: skip
    loads = np.bincount(routed, minlength=workers)
    imbalance = (loads.max() - loads.mean()) / len(routed)
    pairs = len(set(zip(keys.tolist(), routed.tolist(), strict=True)))
    dist_cost = pairs / len(set(keys.tolist()))
    pinned = (PINNED_BEFORE if before else PINNED)[(workers, exponent)]
    assert (imbalance, round(dist_cost, 4)) == pinned[2:]  # what the pinned routing balances to
    digests = (hashlib.sha256(routed.tobytes()).hexdigest(),
               hashlib.sha256(grouping.snapshot()).hexdigest())  # fmt: skip
    assert digests == pinned[:2], (digests, imbalance, dist_cost)
