"""The test-only join oracle: the pairs it expects, and that its check refuses a wrong table."""

from __future__ import annotations

import pandas as pd
import pyarrow as pa
import pytest
from deltalake import write_deltalake

from bronze.join_data.generator import JoinDataSpec, generate
from core.warehouse import Warehouse
from silver.join.schemas import JOINED_ARROW, REJECTS_ARROW
from tests.join_oracle import (
    assert_join_matches,
    assert_run_matches_the_data,
    expected_join,
    join_mismatches,
)

SPEC = JoinDataSpec(lefts=300, rate=1_000, partitions=2, jump_fraction=0.05, seed=3)
# Every gap is exactly gap_max_ms: the exponential's mean is far above its cap.
AT_THE_EDGE = JoinDataSpec(lefts=200, rate=1_000, partitions=2, gap_mean_ms=1e9, gap_max_ms=1_000,
                           seed=5)  # fmt: skip


def _written(expected, run_id="r"):
    """The rows a correct run writes, shaped as delta-rs reads them back (nulls make floats)."""
    pairs, lefts, rights = expected.pairs, expected.unmatched, expected.unpaired_rights
    joined = pd.concat([pairs.assign(record="matched", left_offset=range(len(pairs)),
                                     right_offset=range(len(pairs)), clock_ms=0, expiry_ms=None),
                        lefts.assign(record="unmatched", left_offset=0, clock_ms=0, expiry_ms=0)],
                       ignore_index=True)  # fmt: skip
    rejects = rights.assign(record="orphan_right", right_offset=0, clock_ms=0, reason=None)
    return joined.assign(run_id=run_id, batch_id=0), rejects.assign(run_id=run_id, batch_id=0)


def _arrow(frame, schema):
    """Rows in the silver table's own schema, as the join writes them."""
    rows = frame.reindex(columns=schema.names)
    return pa.Table.from_pandas(rows, schema=schema, preserve_index=False)


@pytest.fixture(scope="module")
def expected():
    return expected_join(SPEC, window_ms=2_000, sync_delay_ms=500)


def test_the_expected_pairs_are_the_generators_partners(expected):
    data = generate(SPEC)
    pairs = expected.pairs.set_index("id")
    assert pairs["right_created_ms"].to_dict() == data.matches
    assert (pairs["left_created_ms"] == pairs.index.map(data.left_created)).all()
    assert set(expected.unmatched["id"]) == set(data.left_created) - set(data.matches)
    assert expected.unpaired_rights.empty


@pytest.mark.parametrize(("window_ms", "paired"), [(1_000, True), (999, False)])
def test_a_pair_exactly_window_ms_apart_joins_one_ms_more_does_not(window_ms, paired):
    expected = expected_join(AT_THE_EDGE, window_ms=window_ms, sync_delay_ms=500)
    partners = len(generate(AT_THE_EDGE).matches)
    assert partners > 100
    assert len(expected.pairs) == (partners if paired else 0)
    assert len(expected.unpaired_rights) == (0 if paired else partners)
    assert len(expected.unmatched) == AT_THE_EDGE.lefts - len(expected.pairs)
    assert ((expected.pairs["right_created_ms"] - expected.pairs["left_created_ms"]) == 1_000).all()


def test_jumps_beyond_the_sync_delay_are_refused():
    with pytest.raises(ValueError, match="exceed the sync-delay"):
        expected_join(SPEC, window_ms=2_000, sync_delay_ms=SPEC.jump_max_ms - 1)


def test_the_exact_output_passes(expected):
    joined, rejects = _written(expected)
    assert join_mismatches(expected, joined, rejects) == []
    edge = expected_join(AT_THE_EDGE, window_ms=999, sync_delay_ms=500)
    assert join_mismatches(edge, *_written(edge)) == []


def _duplicated_pair(joined, rejects):
    return pd.concat([joined, joined[joined["record"] == "matched"].iloc[[7]]]), rejects


def _missing_pair(joined, rejects):
    return joined.drop(index=joined.index[joined["record"] == "matched"][3]), rejects


def _lost_left(joined, rejects):
    return joined.drop(index=joined.index[joined["record"] == "unmatched"][0]), rejects


def _duplicated_unmatched_left(joined, rejects):
    return pd.concat([joined, joined[joined["record"] == "unmatched"].iloc[[1]]]), rejects


def _matched_left_also_unmatched(joined, rejects):
    left = joined[joined["record"] == "matched"].iloc[[0]].assign(record="unmatched")
    return pd.concat([joined, left.assign(right_created_ms=float("nan"))]), rejects


def _wrong_right(joined, rejects):
    wrong = joined.copy()
    wrong.loc[wrong.index[wrong["record"] == "matched"][5], "right_created_ms"] += 1
    return wrong, rejects


def _replay_reject(joined, rejects):
    left = joined[joined["record"] == "matched"].iloc[[0]]
    return joined, pd.concat([rejects, left.assign(record="duplicate")])


def _orphaned_partner(joined, rejects):
    pair = joined[joined["record"] == "matched"].iloc[[2]]
    return joined, pd.concat([rejects, pair.assign(record="orphan_right")])


@pytest.mark.parametrize(("corrupt", "says"), [
    (_duplicated_pair, "matched pairs: 1 written more than once"),
    (_missing_pair, "matched pairs: 1 missing"),
    (_lost_left, "unmatched lefts: 1 missing"),
    (_duplicated_unmatched_left, "unmatched lefts: 1 written more than once"),
    (_matched_left_also_unmatched, "unmatched lefts: 1 not expected"),
    (_wrong_right, "matched pairs: 1 missing"),
    (_replay_reject, "silver.join_rejects: 1 rows of kinds ['duplicate']"),
    (_orphaned_partner, "late or orphan rights: 1 not expected"),
])  # fmt: skip
def test_each_wrong_table_is_refused(expected, corrupt, says):
    joined, rejects = corrupt(*_written(expected))
    problems = join_mismatches(expected, joined, rejects)
    assert any(problem.startswith(says) for problem in problems), problems
    with pytest.raises(AssertionError, match="not the data's"):
        assert_join_matches(expected, joined, rejects)


def test_a_lost_unpaired_right_is_refused():
    edge = expected_join(AT_THE_EDGE, window_ms=999, sync_delay_ms=500)
    joined, rejects = _written(edge)
    problems = join_mismatches(edge, joined, rejects.iloc[1:])
    assert [p.split(",")[0] for p in problems] == ["late or orphan rights: 1 missing"]


def test_the_delta_read_keeps_duplicates_and_other_runs_out(expected, tmp_path):
    warehouse = Warehouse(tmp_path / "lakehouse")
    joined, rejects = _written(expected)
    other_run, _ = _written(expected, run_id="other")
    uri = warehouse.table_uri("silver", "joined")
    write_deltalake(uri, _arrow(pd.concat([joined, other_run]), JOINED_ARROW))
    write_deltalake(warehouse.table_uri("silver", "join_rejects"), _arrow(rejects, REJECTS_ARROW))
    assert_run_matches_the_data(warehouse, "r", expected)  # the other run's copy is no duplicate
    write_deltalake(uri, _arrow(joined.iloc[[0]], JOINED_ARROW), mode="append")  # committed twice
    with pytest.raises(AssertionError, match="matched pairs: 1 written more than once"):
        assert_run_matches_the_data(warehouse, "r", expected)
