"""Silver's block transport: packing loses, adds and reorders nothing."""

from __future__ import annotations

import pyarrow as pa
import pytest

import silver.blocks as blocks_module
from silver.blocks import bronze_blocks, pack, pack_table, unpack
from silver.schemas import ROUTED_ARROW


def _bronze(rows: int) -> pa.Table:
    return pa.table({
        "run_id": pa.array(["a", "b"] * (rows // 2), pa.string()),
        "partition": pa.array([i % 5 for i in range(rows)], pa.int32()),
        "offset": pa.array(range(rows), pa.int64()),
        "timestamp": pa.array([i * 1000 for i in range(rows)], pa.timestamp("us", tz="UTC")),
        "value": pa.array([bytes([i % 256, 0]) for i in range(rows)], pa.binary()),
    })  # fmt: skip


def test_blocks_hold_each_splitters_rows_in_order(monkeypatch) -> None:
    monkeypatch.setattr(blocks_module, "BLOCK_ROWS", 7)
    table = _bronze(100)
    keys = [40, 41, 42]

    out = bronze_blocks(table, 3, keys, run_id="a")

    assert out.column("splitter_group").to_pylist() == [
        keys[s] for s in out["splitter"].to_pylist()
    ]
    assert max(out["rows"].to_pylist()) <= 7  # large splitters take several blocks
    for splitter in range(3):
        mine = [b for b, s in zip(out["block"].to_pylist(), out["splitter"].to_pylist(), strict=True)
                if s == splitter]  # fmt: skip
        rows = unpack(mine)
        expected = table.filter(pa.compute.equal(table["run_id"], "a"))
        expected = expected.filter(
            pa.array([p % 3 == splitter for p in expected["partition"].to_pylist()])
        )
        assert rows.drop(["splitter"]).equals(expected)
        assert set(rows["splitter"].to_pylist()) == {splitter}
    assert sum(out["rows"].to_pylist()) == 50


def test_routed_blocks_round_trip_and_empty_output() -> None:
    rows = pa.table({name: pa.nulls(3, field.type) for name, field in zip(
        ROUTED_ARROW.names, ROUTED_ARROW, strict=True)}).cast(ROUTED_ARROW)  # fmt: skip
    blocks = [*pack_table(rows), pack(rows.slice(0, 1))]

    assert unpack(blocks, ROUTED_ARROW).num_rows == 4
    assert unpack(blocks, ROUTED_ARROW).schema.equals(ROUTED_ARROW)
    assert unpack([], ROUTED_ARROW).num_rows == 0
    with pytest.raises(ValueError, match="no blocks"):
        unpack([])
