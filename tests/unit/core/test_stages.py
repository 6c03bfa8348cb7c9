"""A stage's checkpoint: dropped only when its tables record none of its committed batches;
the shuffle partition count it recorded, read back."""

from __future__ import annotations

import json

import pytest

from core.stages import Stage, _clear_orphaned, recorded_shuffle_partitions


def _checkpoint(path, commits: list[str]):
    (path / "offsets").mkdir(parents=True)
    (path / "commits").mkdir()
    for name in commits:
        (path / "offsets" / name).write_text("v1")
        (path / "commits" / name).write_text("v1")
    return path


def _stage(checkpoint, recorded) -> Stage:
    return Stage("silver", None, lambda df, batch_id: None, str(checkpoint), recorded=recorded)  # type: ignore[arg-type]


def _never_asked() -> bool:
    raise AssertionError("the tables were asked although no batch was committed")


@pytest.mark.parametrize(("commits", "recorded", "kept"), [
    (["0", "1"], lambda: False, False),  # the tables are gone: start afresh
    (["0", "1"], lambda: True, True),  # a run to resume
    (["0", "1"], None, True),  # the stage cannot tell: trust the checkpoint
    ([], _never_asked, True),  # nothing committed yet (Spark resumes the planned batch)
    ([".0.crc"], _never_asked, True),
])  # fmt: skip
def test_only_a_checkpoint_no_table_backs_is_dropped(tmp_path, commits, recorded, kept):
    checkpoint = _checkpoint(tmp_path / "ckpt", commits)
    _clear_orphaned(_stage(checkpoint, recorded))
    assert checkpoint.exists() is kept


def test_a_query_never_started_has_nothing_to_drop(tmp_path):
    _clear_orphaned(_stage(tmp_path / "none", _never_asked))
    assert not (tmp_path / "none").exists()


def _offsets(path, batches: dict[str, str]):
    (path / "offsets").mkdir(parents=True)
    for name, text in batches.items():
        (path / "offsets" / name).write_text(text)
    return str(path)


def _batch(partitions: int) -> str:
    # Spark's layout: a version line, the batch's metadata, then each source's offsets.
    conf = {"spark.sql.shuffle.partitions": str(partitions), "spark.sql.streaming.x": "1"}
    return "\n".join(["v1", json.dumps({"batchWatermarkMs": 0, "conf": conf}), '{"0":400}'])


@pytest.mark.parametrize(("batches", "recorded"), [
    ({"0": _batch(4), "1": _batch(4), ".1.crc": "x"}, 4),
    ({"9": _batch(2), "10": _batch(4)}, 4),  # the latest batch, by number, not by name
    ({".0.tmp": "v1"}, None),  # no batch planned yet
    ({"0": "v1"}, None),  # not Spark's layout: Spark's own start tells what is wrong
    ({"0": "v1\n{\"conf\": {}}"}, None),
])  # fmt: skip
def test_the_shuffle_partitions_a_checkpoint_recorded(tmp_path, batches, recorded):
    assert recorded_shuffle_partitions(_offsets(tmp_path / "ckpt", batches)) == recorded


def test_a_checkpoint_not_there_recorded_nothing(tmp_path):
    assert recorded_shuffle_partitions(str(tmp_path / "none")) is None
