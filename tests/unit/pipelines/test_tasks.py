"""The job specs' console scripts: thin wrappers that report user mistakes like dkg does."""

from __future__ import annotations

from pipelines.tasks import produce_main, sql_main


def test_produce_rejects_bad_arguments_in_one_line(tmp_path, capsys):
    assert produce_main(["--topic", "t", "--partitions", "0"]) == 2
    err = capsys.readouterr().err
    assert err == "dkg-produce: error: argument --partitions: must be at least 1, got 0\n"
    assert produce_main(["--topic", "t", "--dataset", "NOPE"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("dkg-produce: error:") and "NOPE" in err and err.count("\n") == 1


def test_sql_main_is_dkg_sql(capsys):
    assert sql_main([]) == 2
    assert "dkg sql: error: give a query or --file" in capsys.readouterr().err
