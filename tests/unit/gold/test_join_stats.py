"""Gold join statistics: replay duplicates removed, per-window rates and latency."""

from __future__ import annotations

import pandas as pd

from gold.join_stats import dedup_joined, join_window_stats


def _joined(rows):
    return pd.DataFrame(rows, columns=["batch_id", "record", "id", "left_created_ms",
                                       "right_created_ms", "clock_ms"])


def test_a_replayed_left_keeps_its_match():
    joined = _joined([(3, "unmatched", "a", 100, None, 5_000), (1, "matched", "a", 100, 300, 400),
                      (2, "matched", "a", 100, 300, 900), (1, "unmatched", "b", 200, None, 4_000)])
    unique = dedup_joined(joined)
    assert unique.set_index("id")["record"].to_dict() == {"a": "matched", "b": "unmatched"}
    assert unique.set_index("id")["batch_id"].to_dict() == {"a": 1, "b": 1}


def test_window_stats_count_rates_latency_and_rejects():
    joined = _joined([(0, "matched", "a", 100, 300, 400), (0, "matched", "b", 200, 250, 400),
                      (0, "unmatched", "c", 900, None, 5_000), (1, "matched", "a", 100, 300, 800),
                      (0, "matched", "d", 1_500, 1_600, 2_600)])
    rejects = pd.DataFrame({"record": ["late_right", "orphan_right", "quarantine"],
                            "right_created_ms": [950, 1_200, None]})
    stats = join_window_stats(joined, rejects, 1_000, "r").set_index("window_start_ms")
    first, second, total = stats.loc[0], stats.loc[1_000], stats.loc[-1]
    assert (first["lefts"], first["matched"], first["unmatched"]) == (3, 2, 1)
    assert first["match_rate"] == 2 / 3
    assert first["latency_p50_ms"] == 125.0  # clock - later creation: 100 and 150
    assert (first["late_rights"], first["duplicates_removed"]) == (1, 1)
    assert (second["lefts"], second["orphan_rights"], second["latency_p99_ms"]) == (1, 1, 1_000.0)
    assert (total["lefts"], total["matched"], total["quarantined"]) == (4, 3, 1)
    assert total["scope"] == "cumulative"


def test_arrow_and_pandas_input_give_the_same_stats_and_empty_input_one_cumulative_row():
    import pyarrow as pa

    joined = _joined([(0, "matched", "a", 100, 300, 400), (2, "unmatched", "a", 100, None, 900),
                      (1, "unmatched", "b", 1_200, None, 4_000)])
    rejects = pd.DataFrame({"record": ["orphan_right"], "right_created_ms": [2_500]})
    from_arrow = join_window_stats(pa.Table.from_pandas(joined), rejects, 1_000, "r")
    pd.testing.assert_frame_equal(from_arrow, join_window_stats(joined, rejects, 1_000, "r"))
    assert from_arrow["window_start_ms"].tolist() == [0, 1_000, 2_000, -1]
    empty = join_window_stats(joined.iloc[:0], rejects.iloc[:0], 1_000, "r")
    assert empty["scope"].tolist() == ["cumulative"] and empty["lefts"].tolist() == [0]
