"""The routing step's rows and files follow from the rows alone, not from how they were split."""

from __future__ import annotations

import itertools

import numpy as np
import pyarrow as pa

from core.storage import LOCAL_FILES
from silver.parsing import parse_raw_events
from silver.routing import route_splitter_rows
from tests.messages import keyed_json

NOW = 1_767_225_600_000
# Past 131,072 rows an int64 column fills a Parquet page: pages would follow the chunks.
MESSAGES = 140_000


def _parsed() -> pa.Table:
    keys = np.random.default_rng(3).zipf(1.4, MESSAGES) % 500
    raw = pa.table({
        "run_id": pa.array(["r"] * MESSAGES), "partition": pa.array(np.zeros(MESSAGES), pa.int32()),
        "offset": pa.array(np.arange(MESSAGES), pa.int64()),
        "timestamp": pa.array(np.full(MESSAGES, NOW * 1000), pa.timestamp("us", tz="UTC")),
        "value": pa.array([keyed_json(f"k{k}", 1, NOW + i) for i, k in enumerate(keys.tolist())]),
    })  # fmt: skip
    return parse_raw_events(raw, "ZIPF", splitters=1)


def _in_chunks(table: pa.Table, sizes: list[int]) -> pa.Table:
    bounds = np.cumsum([0, *sizes]).tolist()
    return pa.concat_tables([table.slice(a, b - a) for a, b in itertools.pairwise(bounds)])


def test_routed_rows_and_their_file_do_not_depend_on_the_input_s_chunks(tmp_path):
    parsed = _parsed()
    files = []
    for number, sizes in enumerate([[MESSAGES], [50_000, 50_000, 40_000], [20_000] * 7]):
        rows = _in_chunks(parsed, sizes)
        assert rows.column("key").num_chunks == len(sizes)
        routed, state = route_splitter_rows(rows, None, "DYNAMIC_KEY", 10, {})
        assert routed.column("worker").num_chunks == 1
        LOCAL_FILES.write_parquet(str(tmp_path), f"{number}.parquet", routed)
        files.append(((tmp_path / f"{number}.parquet").read_bytes(), state))
    assert files[1] == files[0] and files[2] == files[0]
