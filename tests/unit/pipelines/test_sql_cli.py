"""``dkg sql`` argument errors: one line, exit 2, before any Spark session starts."""

from __future__ import annotations

from pipelines.cli import main


def test_query_or_file_is_required(tmp_path, capsys):
    assert main(["sql", "--warehouse", str(tmp_path)]) == 2
    assert "give a query or --file" in capsys.readouterr().err
    query = tmp_path / "q.sql"
    query.write_text("SELECT 1;\n", encoding="utf-8")
    assert main(["sql", "SELECT 2", "--file", str(query), "--warehouse", str(tmp_path)]) == 2
    assert "one of them" in capsys.readouterr().err


def test_missing_file_is_a_one_line_error(tmp_path, capsys):
    assert main(["sql", "--file", str(tmp_path / "none.sql"), "--warehouse", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("dkg sql: error: cannot read") and err.count("\n") == 1
