"""build_spark: the project's session settings."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from core.spark.class_archive import ARCHIVE
from core.spark.session import (
    CHECKPOINT_FILE_MANAGER,
    LOCAL_JVM_OPTIONS,
    ROCKSDB_PROVIDER,
    SparkSetupError,
    build_spark,
    delta_spark_available,
    find_delta_jars,
    rocksdb_available,
)

pytestmark = pytest.mark.spark


def test_session_settings(core_spark: SparkSession) -> None:
    conf = core_spark.conf
    assert conf.get("spark.sql.session.timeZone") == "UTC"
    assert conf.get("spark.sql.execution.arrow.pyspark.enabled") == "true"
    assert conf.get("spark.sql.shuffle.partitions") == "2"
    assert conf.get("spark.ui.enabled") == "false"
    # Renames in-process: the default's FileContext starts a readlink process for each.
    assert conf.get("spark.sql.streaming.checkpointFileManagerClass") == CHECKPOINT_FILE_MANAGER
    assert core_spark.sparkContext.master == "local[2]"
    assert core_spark.sparkContext.getConf().get("spark.driver.memory") == "2g"
    assert not conf.get("spark.sql.warehouse.dir").startswith(f"file:{Path.cwd()}")
    jvm = core_spark.sparkContext._jvm  # py4j: the JVM's own launch flags
    launched = list(
        jvm.java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments()
    )
    # C1 only, with the code cache of a tiered JVM (C1 alone would shrink it to 48 MB).
    assert set(LOCAL_JVM_OPTIONS.split()) <= set(launched)


def test_the_driver_maps_the_class_archive_setup_wrote(core_spark: SparkSession) -> None:
    assert ARCHIVE.is_file(), "scripts/setup.sh writes it (python -m core.spark.class_archive)"
    jvm = core_spark.sparkContext._jvm
    # The JVM's own account of the class-data-sharing archives it mapped: the JDK's base
    # archive (about 12 MB) and, on top, the project's (well over 100 MB).
    info = subprocess.run(["jcmd", str(jvm.java.lang.ProcessHandle.current().pid()), "VM.info"],  # noqa: S603, S607
                          capture_output=True, text=True, timeout=60, check=True).stdout  # fmt: skip
    mapped = re.search(r"CDS archive\(s\) mapped at: .*, size (\d+),", info)
    assert mapped, info[:2000]
    assert int(mapped.group(1)) > ARCHIVE.stat().st_size / 2


def test_state_store_is_rocksdb_when_it_loads(core_spark: SparkSession) -> None:
    provider = core_spark.conf.get("spark.sql.streaming.stateStore.providerClass")
    assert (provider == ROCKSDB_PROVIDER) == rocksdb_available(core_spark)


def test_delta_spark_is_detected_consistently(core_spark: SparkSession) -> None:
    # No delta-spark jars on these machines: the session must not claim them.
    assert delta_spark_available(core_spark) == (find_delta_jars() is not None)


@pytest.mark.skipif(find_delta_jars() is not None, reason="Delta jars are available here")
def test_demanding_delta_jars_that_are_absent_fails_fast() -> None:
    with pytest.raises(SparkSetupError, match="delta_jars=True"):
        build_spark(delta_jars=True)


def test_python_workers_run_this_interpreter(core_spark: SparkSession) -> None:
    import sys

    workers = core_spark.sparkContext.parallelize([0], 1).map(lambda _: sys.executable).collect()
    assert workers == [sys.executable]


def test_data_source_planners_import_compiled_pyspark(core_spark: SparkSession) -> None:
    # schema() runs in a planner process Spark starts afresh (not from the worker
    # daemon); it must not import pyspark from SPARK_HOME's zip.
    from pyspark.sql.datasource import DataSource, DataSourceReader

    class OneRow(DataSourceReader):
        def read(self, partition: object) -> Iterator[tuple[int]]:
            yield (1,)

    class WhereIsPyspark(DataSource):
        @classmethod
        def name(cls) -> str:
            return "where_is_pyspark"

        def schema(self) -> str:
            import pyspark

            return f"{'zip' if '.zip' in pyspark.__file__ else 'installed'} int"

        def reader(self, schema: object) -> DataSourceReader:
            return OneRow()

    core_spark.dataSource.register(WhereIsPyspark)
    frame = core_spark.read.format("where_is_pyspark").load()
    assert frame.columns == ["installed"]
    assert frame.collect()[0][0] == 1


def test_the_status_store_keeps_a_bounded_history(core_spark: SparkSession) -> None:
    # Every micro-batch adds jobs to Spark's status store; a long run must not keep them all.
    for _ in range(130):
        core_spark.range(1).count()
    tracker = core_spark.sparkContext.statusTracker()
    assert 0 < len(tracker.getJobIdsForGroup(None)) <= 100

