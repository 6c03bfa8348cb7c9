"""W_CHOICES: heavy keys over all workers, the rest as PARTIAL_KEY."""

from __future__ import annotations

import numpy as np
import pandas as pd

from silver.groupings.w_choices import WChoicesGrouping, WChoicesParams
from tests.unit.silver.groupings.conftest import zipf_stream


def test_heavy_key_spreads_over_all_workers_and_light_keys_over_at_most_two():
    workers = 30
    keys, times, p = zipf_stream(100_000, exponent=1.4, keys=2000, seed=9)
    grouping = WChoicesGrouping(workers)
    routed = grouping.route(keys, times)
    spread = pd.DataFrame({"k": keys, "w": routed}).groupby("k")["w"].nunique()
    assert spread["key-1"] == workers
    light = [f"key-{r}" for r in range(1, 2001) if p[r - 1] < grouping.theta / 10]
    assert spread.reindex(light).dropna().max() <= 2


def test_summary_is_sized_so_the_threshold_stays_above_its_error():
    for workers in (21, 50, 200):
        grouping = WChoicesGrouping(workers, WChoicesParams())
        capacity = len(grouping.state.sk_counts)
        # SpaceSaving over-estimates by at most N / capacity: keep that below theta.
        assert 1.0 / capacity <= grouping.theta * grouping.params.error_ratio + 1e-12


def test_does_not_degenerate_into_shuffle_with_many_workers():
    keys, times, _ = zipf_stream(50_000, exponent=1.4, keys=2000, seed=4)
    grouping = WChoicesGrouping(50)
    grouping.route(keys, times)
    heavy = grouping.hot_keys()
    assert 0 < len(heavy) < 40
    assert all(h.pool_size == 50 for h in heavy)


def test_a_restored_grouping_still_names_its_heavy_keys():
    keys = np.array(["hot"] * 600 + [f"k{i}" for i in range(400)], dtype=object)
    times = np.arange(len(keys), dtype=np.int64)
    grouping = WChoicesGrouping(10)
    grouping.route(keys, times)
    restored = WChoicesGrouping.restore(10, grouping.params, grouping.snapshot())
    assert [hot.key for hot in restored.hot_keys()] == ["hot"]
