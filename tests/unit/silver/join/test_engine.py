"""The join state machine against the generator's ground truth, without Spark."""

from __future__ import annotations

import json

import pandas as pd
import pyarrow as pa
import pytest

from bronze.join_data import JoinDataSpec, generate
from silver.join.engine import JoinEngine, JoinParams
from silver.join.local import LocalJoin, as_pandas, generated_batches
from silver.join.operator import join_shard_rows
from silver.join.state import JoinState, JoinStateError

PARAMS = JoinParams(window_ms=2_000, sync_delay_ms=500, partitions=(4, 4))


def _run(spec: JoinDataSpec, shards: int = 2, batch: int = 5_000) -> tuple[pd.DataFrame, list[pd.DataFrame]]:
    data = generate(spec)
    join = LocalJoin(PARAMS, shards=shards)
    phases = [join.run(generated_batches(data.phase(p), batch)) for p in range(data.phases)]
    return pd.concat(phases, ignore_index=True), phases


def _process(engine: JoinEngine, rows: pd.DataFrame) -> pd.DataFrame:
    return as_pandas(engine.process(pa.Table.from_pandas(rows, preserve_index=False)))


def _assert_exact(out: pd.DataFrame, spec: JoinDataSpec) -> None:
    data = generate(spec)
    matched = out[out["record"] == "matched"]
    unmatched = out[out["record"] == "unmatched"]
    assert dict(zip(matched["id"], matched["right_created_ms"], strict=True)) == data.matches
    assert set(unmatched["id"]) == set(data.left_created) - set(data.matches)
    assert not matched["id"].duplicated().any()
    assert (out["record"].isin(["matched", "unmatched", "state"])).all()


@pytest.mark.parametrize("shards", [1, 3])
@pytest.mark.parametrize("batch", [1_500, 5_000])
def test_in_order_data_finds_every_match(shards, batch):
    spec = JoinDataSpec(lefts=3_000, jump_fraction=0.0, seed=1)
    out, _ = _run(spec, shards, batch)
    _assert_exact(out, spec)


@pytest.mark.parametrize("seed", [2, 3])
def test_moderately_out_of_order_data_finds_every_match(seed):
    # 10% of records jump back by up to 400 ms, within the 500 ms sync-delay.
    spec = JoinDataSpec(lefts=4_000, jump_fraction=0.1, jump_max_ms=400, seed=seed)
    out, _ = _run(spec, batch=1_000)
    _assert_exact(out, spec)


def test_stalled_partition_pauses_expiry_instead_of_false_unmatched():
    spec = JoinDataSpec(lefts=8_000, rate=2_000, stall_partition=1, seed=4)
    data = generate(spec)
    held_back = set(data.phase(1)["id"].dropna())
    assert len(held_back) > 500
    out, (first, _) = _run(spec, batch=1_000)
    # While the partition stands still nothing that could match it is declared unmatched ...
    assert not held_back & set(first.loc[first["record"] == "unmatched", "id"])
    # ... even though the other partitions ran far ahead of it.
    state = first[first["record"] == "state"]
    assert state["pending_left"].iloc[-2:].sum() >= len(held_back)
    _assert_exact(out, spec)


def test_expiry_waits_for_partitions_never_seen():
    engine = JoinEngine(JoinParams(window_ms=10, sync_delay_ms=0, partitions=(1, 2)))
    rows = pd.DataFrame({"side": [0, 0, 1], "partition": [0, 0, 0], "offset": [0, 1, 0],
                         "id": ["a", None, None], "created_ms": [0, 10_000, 10_000]})
    assert _process(engine, rows).empty
    assert engine.expiry() is None
    late = pd.DataFrame({"side": [1], "partition": [1], "offset": [0], "id": [None],
                         "created_ms": [10_000]})
    out = _process(engine, late)
    assert out["record"].tolist() == ["unmatched"]
    assert engine.expiry() == 10_000


def _rows(*records: tuple[int, int, int, str | None, int]) -> pd.DataFrame:
    return pd.DataFrame(records, columns=["side", "partition", "offset", "id", "created_ms"])


def test_one_left_to_at_most_one_right_and_late_right():
    engine = JoinEngine(JoinParams(window_ms=100, sync_delay_ms=0, partitions=(1, 1)))
    out = _process(engine, _rows((0, 0, 0, "a", 0), (0, 0, 1, "b", 10), (1, 0, 0, "a", 50),
                               (1, 0, 1, "a", 60), (1, 0, 2, "z", 70)))
    # The second right for "a" is a duplicate: one left joins at most one right.
    assert out.set_index("record")["right_offset"].to_dict() == {"matched": 0, "duplicate": 1}
    out = _process(engine, _rows((0, 0, 2, None, 1_000), (1, 0, 3, None, 1_000)))
    assert out.set_index("record")["id"].to_dict() == {"unmatched": "b", "orphan_right": "z"}
    out = _process(engine, _rows((1, 0, 4, "b", 120)))  # b's left already went out unmatched
    out = pd.concat([out, _process(engine, _rows((0, 0, 3, None, 2_000), (1, 0, 5, None, 2_000)))])
    assert out["record"].tolist() == ["late_right"]


def test_pairs_outside_the_window_do_not_match():
    engine = JoinEngine(JoinParams(window_ms=100, sync_delay_ms=0, partitions=(1, 1)))
    out = _process(engine, _rows((0, 0, 0, "a", 0), (1, 0, 0, "a", 101)))
    assert out.empty


def test_a_replayed_batch_gives_the_same_rows():
    spec = JoinDataSpec(lefts=3_000, jump_fraction=0.1, seed=5)
    batches = list(generated_batches(generate(spec).records, 1_000))
    params = JoinParams(partitions=(4, 4))
    _, snapshot = join_shard_rows(0, _with_error(batches[0]), None, params)
    first, state1 = join_shard_rows(0, _with_error(batches[1]), snapshot, params)
    again, state2 = join_shard_rows(0, _with_error(batches[1]), snapshot, params)
    assert first.equals(again)
    assert state1 == state2
    assert first.num_rows > 100


def _with_error(frame: pd.DataFrame) -> pa.Table:
    return pa.Table.from_pandas(frame.assign(error=None), preserve_index=False)


def test_state_round_trips_and_rejects_garbage():
    engine = JoinEngine(JoinParams(window_ms=100, sync_delay_ms=0, partitions=(1, 1)))
    _process(engine, _rows((0, 0, 0, "a", 0), (1, 0, 0, "b", 5), (0, 0, 1, "c", 60)))
    _process(engine, _rows((0, 0, 2, None, 115), (1, 0, 1, None, 115)))
    state = engine.state
    assert (len(state.lefts), len(state.rights), len(state.expired)) == (1, 0, 1)
    assert JoinState.from_bytes(state.to_bytes()).equals(state)
    assert JoinState.from_bytes(JoinState().to_bytes()).equals(JoinState())
    with pytest.raises(JoinStateError):
        JoinState.from_bytes(b"not a state")
    with pytest.raises(JoinStateError):  # Arrow reads this as an IO error (an OSError)
        JoinState.from_bytes(b"\x00\x00\x00\x80")


@pytest.mark.parametrize("change", ["clock", "progress", "column"])
def test_state_of_another_shape_is_a_clear_error(change):
    table = pa.ipc.open_stream(JoinState(progress={(0, 0): 5}, clock=5).to_bytes()).read_all()
    meta = {"progress": [[0, 0, 5]], "clock": 5}
    if change == "clock":
        meta["clock"] = "soon"
    elif change == "progress":
        meta["progress"] = [[0, 0]]
    else:
        table = table.drop_columns(["offset"])
    table = table.replace_schema_metadata({"join": json.dumps(meta)})
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    with pytest.raises(JoinStateError):
        JoinState.from_bytes(sink.getvalue().to_pybytes())


def test_state_stays_bounded_by_the_window_on_a_long_stream():
    # A 12 s stream: pending records fill up in window + sync-delay (2.5 s), and
    # expired ids are remembered for another 2.5 s; after that the state is flat.
    spec = JoinDataSpec(lefts=60_000, rate=5_000, jump_fraction=0.05, seed=6)
    data = generate(spec)
    join = LocalJoin(PARAMS, shards=2)
    sizes, pending = [], []
    for batch in generated_batches(data.records, 4_000):
        state = as_pandas(join.process(batch)).query("record == 'state'")
        sizes.append(join.state_bytes())
        pending.append(int(state["pending_left"].sum() + state["pending_right"].sum()))
    steady = sizes[len(sizes) // 3:-2]  # skip the fill-up and the closing flush
    assert max(steady[len(steady) // 2:]) <= 1.1 * max(steady[: len(steady) // 2])
    # Pending: at most window + sync-delay + one batch (0.4 s) + jumps at 5k lefts/s, both sides.
    assert max(pending) <= (2_000 + 500 + 400 + 300) / 1000 * 5_000 * 2
    assert max(pending) > 1_000
    # The closing heartbeats flush every pending record (only expired ids stay, for late rights).
    final = [JoinState.from_bytes(snapshot) for snapshot in join.snapshots.values()]
    assert all(state.lefts.num_rows == state.rights.num_rows == 0 for state in final)


def test_a_clock_at_zero_is_a_clock():
    engine = JoinEngine(JoinParams(window_ms=100, sync_delay_ms=0, partitions=(1, 1)))
    _process(engine, _rows((0, 0, 0, "a", 0)))
    _process(engine, _rows((0, 0, 1, "b", -5)))  # a record from before the newest
    assert engine.state.clock == 0


def test_quarantine_rows_do_not_follow_the_order_the_blocks_arrived_in():
    rows = pd.DataFrame({"side": [1, 0, 0, 1], "partition": [2, 1, 0, 0], "offset": [7, 3, 9, 1],
                         "id": ["a", None, None, "b"], "created_ms": [5, None, None, 6],
                         "error": [None, "record without id", "not json", None]})  # fmt: skip
    outputs = [join_shard_rows(0, pa.Table.from_pandas(frame, preserve_index=False), None,
                               PARAMS)[0] for frame in (rows, rows.iloc[::-1])]  # fmt: skip
    assert outputs[0].equals(outputs[1])
    quarantined = as_pandas(outputs[0]).query("record == 'quarantine'")
    assert quarantined["reason"].tolist() == ["not json", "record without id"]  # partition 0 first
