"""A stage's checkpoint is dropped only when its tables record none of its committed batches."""

from __future__ import annotations

import pytest

from core.stages import Stage, _clear_orphaned


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
