"""The only SparkSession builder, plus probes for optional JVM features.

Delta's own Spark integration (delta-spark) needs its jars in the driver JVM.
Maven Central is not reachable from these machines, so :func:`build_spark` never
asks Spark to download anything (no ``spark.jars.packages``): it enables Delta's
SQL extension only when the ``delta-spark`` Python package is installed *and* its
jars of the same version are already local, either on Spark's classpath
(``pyspark/jars``) or in an Ivy cache (``~/.ivy2.5.2/jars``, ``~/.ivy2/jars``)
from an earlier ``configure_spark_with_delta_pip`` run. Otherwise tables go
through the delta-rs backend in :mod:`core.tables`.
"""

from __future__ import annotations

import importlib.metadata
import logging
import os
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core import logs
from core.config import default_conf_dir
from core.errors import DkgError
from core.network import connect_problems
from core.spark.class_archive import archive_options
from core.spark.jvm_output import JvmStartError, launch_quiet_gateway
from core.spark.spark_home import compiled_spark_home

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = [
    "CHECKPOINT_FILE_MANAGER",
    "DELTA_CATALOG",
    "DELTA_EXTENSION",
    "LOCAL_JVM_OPTIONS",
    "ROCKSDB_PROVIDER",
    "SparkSetupError",
    "build_spark",
    "check_master_reachable",
    "delta_spark_available",
    "find_delta_jars",
    "local_driver_java_options",
    "rocksdb_available",
]

logger = logging.getLogger(__name__)

DELTA_EXTENSION = "io.delta.sql.DeltaSparkSessionExtension"
DELTA_CATALOG = "org.apache.spark.sql.delta.catalog.DeltaCatalog"
ROCKSDB_PROVIDER = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
_STATE_STORE_CONF = "spark.sql.streaming.stateStore.providerClass"
_SCALA_BINARY = "2.13"  # Spark 4 is built for Scala 2.13 only


class SparkSetupError(DkgError, RuntimeError):
    """The session cannot be built as requested (e.g. Delta jars demanded but absent)."""


def _ivy_jar_dirs() -> list[Path]:
    home = Path.home()
    return [home / ".ivy2.5.2" / "jars", home / ".ivy2" / "jars"]


def find_delta_jars() -> list[Path] | None:
    """Locate delta-spark's jars without touching the network.

    Returns:
        ``[]`` when the jars are already on Spark's classpath (``pyspark/jars``),
        the jar files to add with ``spark.jars`` when they sit in an Ivy cache, or
        ``None`` when the ``delta-spark`` package is not installed or its jars of
        the same version are nowhere local.
    """
    try:
        version = importlib.metadata.version("delta-spark")
    except importlib.metadata.PackageNotFoundError:
        return None
    import pyspark

    spark_jars = Path(pyspark.__file__).parent / "jars"
    if list(spark_jars.glob(f"delta-spark_{_SCALA_BINARY}-{version}.jar")):
        return []
    for folder in _ivy_jar_dirs():
        core = folder / f"io.delta_delta-spark_{_SCALA_BINARY}-{version}.jar"
        storage = folder / f"io.delta_delta-storage-{version}.jar"
        if core.is_file() and storage.is_file():
            return [core, storage]
    return None


def _delta_conf(delta_jars: bool | None, extra: Mapping[str, str]) -> dict[str, str]:
    if delta_jars is False:
        return {}
    jars = find_delta_jars()
    if jars is None:
        if delta_jars:
            raise SparkSetupError(
                "delta_jars=True but the delta-spark package or its jars are not available "
                "locally (pyspark/jars or ~/.ivy2.5.2/jars); Maven Central is not reachable here"
            )
        logger.debug("delta-spark jars not found; Delta tables use the delta-rs backend")
        return {}
    conf = {
        "spark.sql.extensions": DELTA_EXTENSION,
        "spark.sql.catalog.spark_catalog": DELTA_CATALOG,
    }
    if jars:
        already = extra.get("spark.jars", "")
        conf["spark.jars"] = ",".join([*filter(None, [already]), *map(str, jars)])
    return conf


def check_master_reachable(master: str, timeout_s: float = 3.0) -> None:
    """Fail in seconds when no standalone master accepts a connection.

    Spark itself retries registering for a minute, then stops its context and
    the session fails with a Java stack trace that does not name the master.
    """
    if not master.startswith("spark://"):
        return
    problems = connect_problems(master.removeprefix("spark://").split(","), timeout_s)
    if problems is None:
        return
    raise SparkSetupError(f"cannot reach the Spark master at {master}: "
                          f"{', '.join(problems) or 'no HOST:PORT'}")  # fmt: skip


def _prepare_environment(master: str) -> None:
    # Python workers (UDFs, Python data sources) start `python3` from PATH unless
    # told otherwise; a different interpreter lacks pyarrow/deltalake. The conf
    # key spark.pyspark.python does not reach the data-source planner workers,
    # the environment variable does.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    if master.startswith("local"):
        # Loopback only for local sessions; also silences the "hostname resolves
        # to a loopback address" warning at start-up.
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        if "SPARK_HOME" not in os.environ:
            _use_compiled_spark_home()


def _use_compiled_spark_home() -> None:
    # Read by pyspark's gateway launcher and inherited by the JVM, which names
    # SPARK_HOME's zips on the planner processes' PYTHONPATH.
    try:
        os.environ["SPARK_HOME"] = str(compiled_spark_home())
    except OSError as error:  # e.g. a read-only temp folder: keep pyspark's own home
        logger.debug("keeping pyspark's own SPARK_HOME: %s", error)


def _class_loadable(spark: SparkSession, name: str) -> bool:
    # py4j is the only way to ask the driver JVM about its classpath.
    jvm = spark.sparkContext._jvm  # noqa: SLF001
    try:
        return bool(jvm.org.apache.spark.util.Utils.classIsLoadable(name))
    except Exception:  # py4j errors: treat as "not loadable"
        logger.debug("probing class %s failed", name, exc_info=True)
        return False


def rocksdb_available(spark: SparkSession) -> bool:
    """Whether the RocksDB state store can run: provider class and native library load."""
    if not _class_loadable(spark, ROCKSDB_PROVIDER):
        return False
    jvm = spark.sparkContext._jvm  # noqa: SLF001
    try:
        jvm.org.rocksdb.RocksDB.loadLibrary()
    except Exception:  # missing native library for this platform
        logger.debug("RocksDB native library does not load", exc_info=True)
        return False
    return True


def delta_spark_available(spark: SparkSession) -> bool:
    """Whether this session can read and write ``format("delta")`` natively.

    True only when Delta's classes load in the driver JVM and its SQL extension is
    configured (as :func:`build_spark` does when it finds the jars).
    """
    extensions = spark.conf.get("spark.sql.extensions", "") or ""
    return DELTA_EXTENSION in extensions and _class_loadable(spark, DELTA_EXTENSION)


# A local session's JVM runs the executors too. Its per-row work moved into Python
# (Arrow files and blocks), and what remains is mostly code Spark generates anew
# for each micro-batch: the C2 compiler spent more CPU on it (about half the JVM's
# in a live run) than its faster code saved. The C1 compiler alone does not. With
# C1 only, the JVM would also shrink its code cache from 240 MB to 48 MB, which a
# long session's generated code fills ("Out of space in CodeCache"): keep 240 MB.
# G1 starts marking its old generation only past 45 % of the heap (1.8 GB of 4 GB),
# which a streaming driver's few hundred MB never reach: promoted garbage of past
# micro-batches piled up (the join's heap after collections grew 235 -> 307 MB in
# 15 minutes). Marking from 5 % on keeps it level (235 -> 227 MB) without full
# collections, whose heap shrinking and regrowing swung resident memory instead.
# G1 allocates an object of half a region or more (1 MB with a 4 GB heap's 2 MB
# regions) in the old generation, and past that 5 % each such allocation starts a
# marking cycle: Spark's Arrow buffers and packed rows of a few MB started 44 in a
# 40-s drain. 16 MB regions keep objects under 8 MB young, where they die; with
# 32 MB ones the join's heap after collections crept up again.
CHECKPOINT_FILE_MANAGER = ("org.apache.spark.sql.execution.streaming.checkpointing."
                           "FileSystemBasedCheckpointFileManager")  # fmt: skip

LOCAL_JVM_OPTIONS = ("-XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=240m "
                     "-XX:-G1UseAdaptiveIHOP -XX:InitiatingHeapOccupancyPercent=5 "
                     "-XX:G1HeapRegionSize=16m")  # fmt: skip


def local_driver_java_options(extra: str = "") -> str:
    """A local driver JVM's options: :data:`LOCAL_JVM_OPTIONS`, the class archive when setup
    wrote one, then ``extra``."""
    return " ".join(filter(None, [LOCAL_JVM_OPTIONS, archive_options(), extra]))


def _base_conf(
    app_name: str, master: str, driver_memory: str, shuffle_partitions: int, ui: bool
) -> dict[str, str]:
    local = {"spark.driver.extraJavaOptions": local_driver_java_options()}
    jvm = local if master.startswith("local") else {}
    return jvm | {
        "spark.app.name": app_name,
        "spark.master": master,
        # Only effective before the driver JVM starts, hence here and not later.
        "spark.driver.memory": driver_memory,
        "spark.sql.shuffle.partitions": str(shuffle_partitions),
        "spark.ui.enabled": str(ui).lower(),
        # Progress bars interleave with logs and test output.
        "spark.ui.showConsoleProgress": str(ui).lower(),
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        # Rows cross to and from Python workers in Arrow batches; Spark's default of
        # 10,000 rows makes the stateful routing step pay per-batch costs ~100 times
        # per million messages.
        "spark.sql.execution.arrow.maxRecordsPerBatch": "100000",
        # A streaming job runs thousands of micro-batches. Spark's status store keeps
        # their jobs, stages, SQL executions and up to 100,000 tasks in the driver JVM's
        # heap, UI or not: through a 15-minute soak the heap after collections grew with it.
        "spark.ui.retainedJobs": "100",
        "spark.ui.retainedStages": "100",
        "spark.ui.retainedTasks": "10000",
        "spark.sql.ui.retainedExecutions": "100",
        # A micro-batch's task runs on the first free core: waiting (3 s by default) for
        # the executor that holds a task's shuffle input put both workers' tasks of a
        # standalone cluster on one executor, one after the other.
        "spark.locality.wait": "0s",
        # Event times are UTC everywhere; the machine's zone must not leak in.
        "spark.sql.session.timeZone": "UTC",
        # Checkpoints and state stores are on a local disk (warehouse.state_dir). Without
        # Hadoop's native library, the default manager's FileContext runs `readlink` for
        # every rename: with `chmod` for every file created, ~30 processes a micro-batch.
        # The FileSystem-based manager renames in-process (atomic on a local disk).
        "spark.sql.streaming.checkpointFileManagerClass": CHECKPOINT_FILE_MANAGER,
        # The catalog is in-memory and our tables are external (see
        # core.tables.catalog); keep Spark's default database folder
        # out of the working directory.
        "spark.sql.warehouse.dir": str(Path(tempfile.gettempdir()) / "dkg-spark-warehouse"),
    }


def _quiet_conf(conf: dict[str, str]) -> dict[str, str]:
    # Java options only reach the driver JVM at launch; appended to whatever the
    # caller set, so their own options still apply.
    log4j = default_conf_dir() / "log4j2.properties"
    if not log4j.is_file():
        return conf
    option = f"-Dlog4j2.configurationFile={log4j.as_uri()}"
    current = conf.get("spark.driver.extraJavaOptions", "")
    return {**conf, "spark.driver.extraJavaOptions": f"{current} {option}".strip()}


def build_spark(
    app_name: str = "dkg",
    master: str = "local[2]",
    driver_memory: str = "4g",
    shuffle_partitions: int = 2,
    ui: bool = False,
    extra_conf: Mapping[str, Any] | None = None,
    delta_jars: bool | None = None,
    log_level: str | None = None,
    quiet: bool | None = None,
    python_daemon: str | None = None,
) -> SparkSession:
    """Build (or return the running) SparkSession with the project's settings.

    Args:
        app_name: Spark application name.
        master: Spark master URL; ``local[N]`` sessions bind to loopback.
        driver_memory: Driver heap, e.g. ``"4g"``; set before the JVM starts.
        shuffle_partitions: ``spark.sql.shuffle.partitions``.
        ui: Start the Spark UI and console progress bars.
        extra_conf: More settings; they win over the defaults above. Setting
            ``spark.sql.streaming.stateStore.providerClass`` here disables the
            RocksDB auto-selection.
        delta_jars: ``True`` requires delta-spark (error if its jars are not
            local), ``False`` never loads it, ``None`` uses it when found.
        log_level: JVM log level after start-up (``WARN``, ``ERROR``, ...);
            default ``ERROR`` when quiet, ``WARN`` otherwise.
        quiet: keep the JVM's banners, warnings and known harmless errors off
            the console (``conf/log4j2.properties`` plus a filter on the JVM's
            stderr); default: quiet unless the CLI runs with ``--verbose``.
            Only applies when this call starts the JVM.
        python_daemon: the module Spark's Python workers fork from
            (``spark.python.daemon.module``), one that loads the caller's code
            first; default: pyspark's own.

    Returns:
        The session. If one is already running in this process, Spark returns it
        and settings that only apply at JVM start (memory, jars) are unchanged.

    Raises:
        SparkSetupError: ``delta_jars=True`` but the jars are not available, or
            the driver JVM exited at start (a master URL or memory it cannot use),
            or no standalone master named by ``master`` accepts a connection.
    """
    from pyspark.sql import SparkSession

    extra = {k: str(v) for k, v in (extra_conf or {}).items()}
    conf = _base_conf(app_name, master, driver_memory, shuffle_partitions, ui)
    if python_daemon:
        conf["spark.python.daemon.module"] = python_daemon
    conf |= _delta_conf(delta_jars, extra)
    conf |= extra
    _prepare_environment(master)
    quiet = not logs.verbose() if quiet is None else quiet
    if quiet:
        conf = _quiet_conf(conf)

    started = time.monotonic()
    check_master_reachable(master)
    try:
        launch_quiet_gateway(conf, keep_all=not quiet)
    except JvmStartError as exc:
        raise SparkSetupError(f"Spark did not start: {exc}") from exc
    builder = SparkSession.builder
    for key, value in conf.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel(log_level or ("ERROR" if quiet else "WARN"))

    # RocksDB keeps large streaming state off the JVM heap; the default
    # HDFS-backed store holds it all in memory. Only a runtime setting, so it is
    # checked after start and only if the caller did not choose a provider.
    if _STATE_STORE_CONF not in extra and rocksdb_available(spark):
        spark.conf.set(_STATE_STORE_CONF, ROCKSDB_PROVIDER)
    logger.debug(
        "SparkSession %s on %s ready in %.1f s (delta-spark: %s, state store: %s)",
        app_name,
        master,
        time.monotonic() - started,
        delta_spark_available(spark),
        spark.conf.get(_STATE_STORE_CONF),
    )
    return spark
