"""Every grouping: same input, same routing; snapshot/restore mid-stream changes nothing."""

from __future__ import annotations

import numpy as np
import pytest

from silver.groupings.registry import GROUPING_NAMES, grouping_class, make_grouping
from tests.unit.silver.groupings.conftest import zipf_stream

VARIANTS = [(name, {}) for name in GROUPING_NAMES] + [
    ("DYNAMIC_KEY", {"mode": "seed", "key_space_cycle_ms": 2000, "check_interval_ms": 3000,
                     "warm_up_ms": 1000}),
    ("CONSISTENT_HASH", {"strategy": "halving"}),
    ("DYNAMIC_KEY", {"relief_share_factor": 0}),
    ("DYNAMIC_KEY", {"placement": "least_loaded"}),
    ("DYNAMIC_KEY", {"relief_share_factor": 0.5, "hot_share_factor": 1.0}),
]  # fmt: skip


@pytest.fixture(scope="module")
def stream():
    keys, times, _ = zipf_stream(60_000, exponent=1.3, keys=3000, seed=21, rate=1000)
    return keys, times


@pytest.mark.parametrize(("name", "params"), VARIANTS, ids=lambda v: str(v))
def test_same_input_same_routing(stream, name, params):
    keys, times = stream
    first = make_grouping(name, 13, params).route(keys, times)
    second = make_grouping(name, 13, params).route(keys, times)
    assert np.array_equal(first, second)
    assert first.dtype == np.int32
    assert first.min() >= 0 and first.max() < 13


@pytest.mark.parametrize(("name", "params"), VARIANTS, ids=lambda v: str(v))
def test_restored_mid_stream_routes_like_an_uninterrupted_run(stream, name, params):
    keys, times = stream
    whole = make_grouping(name, 13, params).route(keys, times)
    rng = np.random.default_rng(0)
    cuts = np.sort(rng.choice(np.arange(1, len(keys)), size=25, replace=False))
    pieces, grouping = [], make_grouping(name, 13, params)
    for start, stop in zip([0, *cuts], [*cuts, len(keys)], strict=True):
        pieces.append(grouping.route(keys[start:stop], times[start:stop]))
        data = grouping.snapshot()
        assert isinstance(data, bytes)
        grouping = grouping_class(name).restore(13, grouping.params, data)
    assert np.array_equal(np.concatenate(pieces), whole)


@pytest.mark.parametrize("name", GROUPING_NAMES)
def test_state_for_other_worker_count_is_refused(name):
    from silver.groupings.state_codec import StateSerializationError

    data = make_grouping(name, 4).snapshot()
    with pytest.raises(StateSerializationError):
        grouping_class(name).restore(5, None, data)


def test_corrupt_state_is_a_clear_error():
    from silver.groupings.state_codec import StateSerializationError

    with pytest.raises(StateSerializationError):
        grouping_class("PARTIAL_KEY").restore(4, None, b"not a state")


@pytest.mark.parametrize("damage", ["cut", "first byte of the data"])
def test_damaged_snapshot_is_a_clear_error(damage):
    from silver.groupings.state_codec import StateSerializationError

    data = bytearray(make_grouping("PARTIAL_KEY", 4).snapshot())
    if damage == "cut":  # a cut archive: zipfile's BadZipFile
        data = data[: len(data) // 2]
    else:  # a changed byte of the stored array: the archive's CRC check fails
        data[data.index(b"\x93NUMPY")] ^= 0xFF
    with pytest.raises(StateSerializationError):
        grouping_class("PARTIAL_KEY").restore(4, None, bytes(data))


def test_snapshot_with_a_field_of_another_type_is_a_clear_error():
    import io

    from silver.groupings.state_codec import StateSerializationError

    with np.load(io.BytesIO(make_grouping("PARTIAL_KEY", 4).snapshot())) as stored:
        fields = {name: stored[name] for name in stored.files}
    fields["sent"] = np.int64(0)  # a scalar where the kernel indexes an array
    buffer = io.BytesIO()
    np.savez(buffer, **fields)
    with pytest.raises(StateSerializationError, match="sent"):
        grouping_class("PARTIAL_KEY").restore(4, None, buffer.getvalue())
