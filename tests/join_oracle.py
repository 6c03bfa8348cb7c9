"""The join's expected output, derived from the generated records alone, and the exact check of a run.

The oracle takes the records the generator makes for the two topics
(``bronze.join_data.generate``: side, partition, id, creation time; heartbeats
have no id) and applies the join's documented contract (``docs/join.md``, seed
004), not its code: a left and the right of the same id form a pair when their
creation times are at most ``window_ms`` apart, both edges included; one left
to at most one right. Every other left comes out unmatched (the closing
heartbeats expire everything), every other right as a late or orphan right.
Nothing of the join is called: not its engine, not ``dedup_joined``, not
``ground_truth_check``.

That contract is exact only while no record arrives more than ``sync_delay_ms``
behind its partition: a longer jump may legitimately cost a pair (the seed: "the
corresponding items could end up being unmatched"). The oracle refuses such
specs instead of guessing which pairs they lose.

The check reads the run's ``silver.joined`` and ``silver.join_rejects`` raw with
delta-rs and deduplicates nothing: every expected row must be there exactly
once, and no other row may be.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable
from dataclasses import dataclass

import pandas as pd
from deltalake import DeltaTable

from bronze.join_data.generator import JoinDataSpec, generate
from core.warehouse import Warehouse

__all__ = ["ExpectedJoin", "assert_join_matches", "assert_run_matches_the_data", "expected_join",
           "join_mismatches", "read_run_tables"]  # fmt: skip

PAIR = ["id", "left_created_ms", "right_created_ms", "left_partition", "right_partition"]
"""What identifies a matched row (offsets are the broker's, not the generator's)."""
LEFT = ["id", "left_created_ms", "left_partition"]
"""What identifies an unmatched left."""
RIGHT = ["id", "right_created_ms", "right_partition"]
"""What identifies a right rejected as late or orphan."""
UNPAIRED_RIGHT_KINDS = ("late_right", "orphan_right")
EXAMPLES = 3


@dataclass(frozen=True)
class ExpectedJoin:
    """The rows a run over the generated data must write, each exactly once.

    Attributes:
        pairs: ``PAIR`` columns, one row per left with its right inside the window.
        unmatched: ``LEFT`` columns, one row per left without a right inside the window.
        unpaired_rights: ``RIGHT`` columns, one row per right that pairs with no left.
    """

    pairs: pd.DataFrame
    unmatched: pd.DataFrame
    unpaired_rights: pd.DataFrame


def _records(records: pd.DataFrame, side: int, prefix: str) -> pd.DataFrame:
    rows = records[(records["side"] == side) & records["id"].notna()]
    repeated = rows["id"][rows["id"].duplicated()]
    if len(repeated):
        # Which copy the join keeps depends on arrival order: not a case this oracle predicts.
        raise ValueError(f"side {side} repeats ids, e.g. {repeated.iloc[0]!r}")
    return pd.DataFrame({"id": rows["id"].to_numpy(),
                         f"{prefix}_created_ms": rows["created_ms"].to_numpy(),
                         f"{prefix}_partition": rows["partition"].to_numpy()})  # fmt: skip


def expected_join(spec: JoinDataSpec, window_ms: int, sync_delay_ms: int) -> ExpectedJoin:
    """What the join of ``spec``'s generated topics must write, from the records and the contract.

    Raises:
        ValueError: records may jump further back than ``sync_delay_ms`` tolerates, or a side
            repeats an id; the contract does not say which pairs such data loses.
    """
    if spec.jump_fraction > 0 and spec.jump_max_ms > sync_delay_ms:
        raise ValueError(f"jumps of up to {spec.jump_max_ms} ms exceed the sync-delay of "
                         f"{sync_delay_ms} ms: pairs may be lost by contract")  # fmt: skip
    records = generate(spec).records
    lefts, rights = _records(records, 0, "left"), _records(records, 1, "right")
    both = lefts.merge(rights, on="id", how="outer", indicator=True)
    gap = (both["right_created_ms"] - both["left_created_ms"]).abs()
    paired = (both["_merge"] == "both") & (gap <= window_ms)
    has_left, has_right = both["_merge"] != "right_only", both["_merge"] != "left_only"
    return ExpectedJoin(_ints(both[paired][PAIR]), _ints(both[has_left & ~paired][LEFT]),
                        _ints(both[has_right & ~paired][RIGHT]))  # fmt: skip


def _ints(frame: pd.DataFrame) -> pd.DataFrame:
    """Times and partitions as int64 (an outer merge makes them float)."""
    return frame.astype({c: "int64" for c in frame.columns if c != "id"}).reset_index(drop=True)


def _keys(frame: pd.DataFrame, columns: list[str]) -> Counter[tuple[Hashable, ...]]:
    """How often each row (of ``columns``) occurs; nulls as None, numbers as int."""
    if frame.empty:
        return Counter()
    values = [[None if pd.isna(v) else (v if name == "id" else int(v)) for v in frame[name]]
              for name in columns]  # fmt: skip
    return Counter(zip(*values, strict=True))


def _compare(what: str, expected: pd.DataFrame, actual: pd.DataFrame,
             columns: list[str]) -> list[str]:  # fmt: skip
    want, have = _keys(expected, columns), _keys(actual, columns)
    missing = [key for key in want if key not in have]
    repeated = [(key, n) for key, n in have.items() if n > 1 and key in want]
    extra = [key for key in have if key not in want]
    problems = []
    for count, text, examples in (
        (len(missing), "missing", missing),
        (len(repeated), "written more than once", repeated),
        (sum(have[key] for key in extra), "not expected", extra),
    ):
        if count:
            problems.append(f"{what}: {count} {text}, e.g. {examples[:EXAMPLES]} ({columns})")
    return problems


def join_mismatches(expected: ExpectedJoin, joined: pd.DataFrame,
                    rejects: pd.DataFrame) -> list[str]:  # fmt: skip
    """Every way the raw rows of one run differ from ``expected`` (empty: exact).

    Args:
        expected: from :func:`expected_join`.
        joined: the run's ``silver.joined`` rows, not deduplicated.
        rejects: the run's ``silver.join_rejects`` rows, not deduplicated.
    """
    record = joined["record"]
    problems = [*_compare("matched pairs", expected.pairs, joined[record == "matched"], PAIR),
                *_compare("unmatched lefts", expected.unmatched,
                          joined[record == "unmatched"], LEFT)]  # fmt: skip
    if (other := record[~record.isin(["matched", "unmatched"])]).size:
        problems.append(f"silver.joined: {other.size} rows of kinds {sorted(set(other))}")
    kind = rejects["record"]
    unpaired = rejects[kind.isin(UNPAIRED_RIGHT_KINDS)]
    problems += _compare("late or orphan rights", expected.unpaired_rights, unpaired, RIGHT)
    # Generated topics repeat no id and hold no malformed message: any other reject means
    # a record was read twice or misread.
    if (other := kind[~kind.isin(UNPAIRED_RIGHT_KINDS)]).size:
        problems.append(f"silver.join_rejects: {other.size} rows of kinds {sorted(set(other))}")
    return problems


def assert_join_matches(expected: ExpectedJoin, joined: pd.DataFrame,
                        rejects: pd.DataFrame) -> None:  # fmt: skip
    """Fail with every mismatch unless the raw rows are exactly ``expected``."""
    problems = join_mismatches(expected, joined, rejects)
    assert not problems, "the join's output is not the data's:\n" + "\n".join(problems)


def _raw(warehouse: Warehouse, table: str, run_id: str) -> pd.DataFrame:
    uri, options = warehouse.table_uri("silver", table), warehouse.storage.delta_options()
    if not DeltaTable.is_deltatable(uri, storage_options=options):
        return pd.DataFrame({"run_id": [], "record": []})  # no row was ever written to it
    rows = DeltaTable(uri, storage_options=options).to_pandas()
    return rows[rows["run_id"] == run_id].reset_index(drop=True)


def read_run_tables(warehouse: Warehouse, run_id: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``silver.joined`` and ``silver.join_rejects`` of one run, every row as written."""
    return _raw(warehouse, "joined", run_id), _raw(warehouse, "join_rejects", run_id)


def assert_run_matches_the_data(warehouse: Warehouse, run_id: str, expected: ExpectedJoin) -> None:
    """Fail unless run ``run_id`` wrote exactly ``expected`` (read raw from Delta)."""
    joined, rejects = read_run_tables(warehouse, run_id)
    assert len(joined), f"silver.joined holds no row of run {run_id!r}"
    assert_join_matches(expected, joined, rejects)
