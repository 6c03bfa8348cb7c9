"""The stateful join step: one shard's rows of a micro-batch through its engine.

Called by ``groupBy("shard").applyInPandasWithState`` on executors; pure pandas
(no Spark import), so tests and the benchmark call it directly. Besides the
join's rows it emits one ``state`` row per shard and batch (pending counts,
snapshot size, expiry), which silver keeps to show the state stays bounded.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pandas as pd

from silver.join.engine import OUTPUT_COLUMNS, JoinEngine, JoinParams
from silver.join.sharding import stack

__all__ = ["OPERATOR_COLUMNS", "join_group_with_state", "join_shard_rows"]

OPERATOR_COLUMNS = ["shard", *OUTPUT_COLUMNS, "reason", "pending_left", "pending_right",
                    "state_bytes"]  # fmt: skip


def join_shard_rows(shard: int, rows: pd.DataFrame, snapshot: bytes | None,
                    params: JoinParams) -> tuple[pd.DataFrame, bytes]:  # fmt: skip
    """One shard's batch: emitted rows (``OPERATOR_COLUMNS``) and the new state bytes."""
    engine = JoinEngine.restore(params, snapshot)
    bad = rows[rows["error"].notna()]
    emitted = engine.process(rows[rows["error"].isna()])
    new_snapshot = engine.snapshot()
    quarantine = pd.DataFrame({
        "record": "quarantine", "id": bad["id"],
        "left_partition": bad["partition"].where(bad["side"] == 0),
        "left_offset": bad["offset"].where(bad["side"] == 0),
        "right_partition": bad["partition"].where(bad["side"] == 1),
        "right_offset": bad["offset"].where(bad["side"] == 1),
        "reason": bad["error"], "clock_ms": engine.state.clock,
    })  # fmt: skip
    status = pd.DataFrame([{"record": "state", "clock_ms": engine.state.clock,
                            "expiry_ms": engine.expiry(), "pending_left": len(engine.state.lefts),
                            "pending_right": len(engine.state.rights),
                            "state_bytes": len(new_snapshot)}])  # fmt: skip
    out = stack([emitted, quarantine, status], OPERATOR_COLUMNS)
    out["shard"] = shard
    return out, new_snapshot


def join_group_with_state(key: tuple[Any, ...], frames: Iterator[pd.DataFrame], state: Any,
                          params: JoinParams) -> Iterator[pd.DataFrame]:  # fmt: skip
    """``applyInPandasWithState`` adapter: the state row holds the engine snapshot.

    The group key only places the shard on a shuffle partition; the shard number
    is the rows' ``shard`` column (the same in every row of the group).
    """
    rows = pd.concat(list(frames), ignore_index=True)
    previous = state.get[0] if state.exists else None
    out, snapshot = join_shard_rows(int(rows["shard"].iloc[0]), rows, previous, params)
    state.update((snapshot,))
    yield out
