"""compiled_spark_home: a mirror of pyspark's home without the zips Spark puts on PYTHONPATH."""

from __future__ import annotations

import shutil
from pathlib import Path

import pyspark
import pytest

from core.spark.spark_home import compiled_spark_home

INSTALLED = Path(pyspark.__file__).resolve().parent


def test_mirror_links_everything_but_the_python_zips(tmp_path: Path) -> None:
    mirror = compiled_spark_home(tmp_path)
    expected = {entry.name for entry in INSTALLED.iterdir()} - {"python"}
    assert {entry.name for entry in mirror.iterdir()} == expected
    assert (mirror / "jars").resolve() == (INSTALLED / "jars").resolve()
    assert (mirror / "bin" / "spark-submit").is_file()
    assert (INSTALLED / "python" / "lib" / "pyspark.zip").is_file()
    assert not (mirror / "python" / "lib" / "pyspark.zip").exists()


def test_mirror_is_built_once_and_repaired_when_incomplete(tmp_path: Path) -> None:
    mirror = compiled_spark_home(tmp_path)
    made = (mirror / "jars").lstat().st_mtime_ns
    assert compiled_spark_home(tmp_path) == mirror
    assert (mirror / "jars").lstat().st_mtime_ns == made
    (mirror / "bin").unlink()
    assert compiled_spark_home(tmp_path) == mirror
    assert (mirror / "bin" / "spark-class").is_file()
    assert [entry.name for entry in tmp_path.iterdir()] == [mirror.name]


def test_a_mirror_that_cannot_be_built_is_an_error_not_a_broken_home(tmp_path: Path) -> None:
    mirror = compiled_spark_home(tmp_path)
    shutil.rmtree(mirror)
    mirror.write_text("a file where the mirror belongs")
    with pytest.raises(OSError):
        compiled_spark_home(tmp_path)
    assert [entry.name for entry in tmp_path.iterdir()] == [mirror.name]
