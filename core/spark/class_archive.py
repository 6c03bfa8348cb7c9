"""A class-data-sharing archive of a local driver's classes: Spark starts in about half the time.

A local Spark driver JVM loads, parses and verifies some 20,000 classes before
its first result, and again in every process that starts Spark (each ``dkg``
command, each subprocess of the test suite). The JVM can write the classes a run
loaded into an archive (``-XX:ArchiveClassesAtExit``) and map them, ready, at
the next start (``-XX:SharedArchiveFile``). ``python -m core.spark.class_archive``
writes one beside the interpreter (``scripts/setup.sh`` does, once per install)
after a small run of what the jobs use: SQL, pandas over Arrow, a stateful
streaming query in Python. Local sessions use it when it is there
(:func:`archive_options`); an archive made by another JVM or for another
classpath is ignored without a word, so a stale one costs nothing.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd
    from pyspark.sql import SparkSession

__all__ = ["ARCHIVE", "archive_options", "write_archive"]

logger = logging.getLogger(__name__)

ARCHIVE = Path(sys.prefix) / "share" / "dkg-lakehouse" / "spark-classes.jsa"
"""Where the archive lives: with the environment whose pyspark it was made from."""

_SILENT = "-Xlog:cds=off -Xlog:cds+dynamic=off"
"""A mismatched archive would print a warning on every start."""


def archive_options(archive: Path = ARCHIVE) -> str:
    """The driver JVM's options that map ``archive``; none while it does not exist."""
    return f"-XX:SharedArchiveFile={archive} {_SILENT}" if archive.is_file() else ""


def _representative_run(spark: SparkSession) -> None:
    """Load the classes the jobs load: SQL, pandas over Arrow, a stateful streaming query."""
    import pandas as pd
    from pyspark.sql import functions as F
    from pyspark.sql.streaming.state import GroupStateTimeout

    def plus_one(frames: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
        for frame in frames:
            yield frame + 1

    spark.range(1000).groupBy((F.col("id") % 7).alias("k")).count().collect()
    spark.range(100).mapInPandas(plus_one, "id long").collect()

    def count(key: tuple[Any, ...], frames: Iterator[pd.DataFrame],
              state: Any) -> Iterator[pd.DataFrame]:  # fmt: skip
        seen = (state.get[0] if state.exists else 0) + sum(len(frame) for frame in frames)
        state.update((seen,))
        yield pd.DataFrame({"k": [key[0]], "n": [seen]})

    stream = (spark.readStream.format("rate").option("rowsPerSecond", 100).load()
              .withColumn("k", F.col("value") % 3)
              .groupBy("k").applyInPandasWithState(count, "k long, n long", "n long", "append",
                                                   GroupStateTimeout.NoTimeout))  # fmt: skip
    query = stream.writeStream.foreachBatch(lambda frame, _: frame.count()).start()
    try:
        while query.lastProgress is None or query.lastProgress["batchId"] < 2:
            query.awaitTermination(0.5)
    finally:
        query.stop()


def write_archive(archive: Path = ARCHIVE) -> Path:
    """Run Spark once with the archive written at its JVM's exit; returns where it is."""
    import tempfile

    from core.spark.session import LOCAL_JVM_OPTIONS, build_spark

    archive.parent.mkdir(parents=True, exist_ok=True)
    archive.unlink(missing_ok=True)  # the run below must not map the archive it replaces
    scratch = Path(tempfile.mkdtemp(prefix="dkg-cds-")) / archive.name
    options = f"{LOCAL_JVM_OPTIONS} -XX:ArchiveClassesAtExit={scratch} -Xlog:cds=off"
    spark = build_spark(app_name="dkg-class-archive", master="local[2]",
                        extra_conf={"spark.driver.extraJavaOptions": options})  # fmt: skip
    _representative_run(spark)
    gateway = spark.sparkContext._gateway  # noqa: SLF001 - no public way to end the JVM
    spark.stop()
    # The JVM writes the archive as it exits, which it does when its stdin closes;
    # the archive is then kept whole or not at all.
    gateway.shutdown()
    gateway.proc.stdin.close()
    gateway.proc.wait(timeout=300)
    os.replace(scratch, archive)
    return archive


def main() -> int:
    """``python -m core.spark.class_archive``: write the archive, say where."""
    logging.basicConfig(level=logging.WARNING)
    path = write_archive()
    print(f"Spark class archive: {path} ({path.stat().st_size / 1e6:.0f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
