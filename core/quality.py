"""The data-quality runner: Great Expectations suites over one run's Delta tables, in Spark.

Each layer declares its suites in ``<layer>/expectations.py`` as :class:`Check`
objects: a GX ``ExpectationSuite`` and the tables its frame comes from. The
runner reads those tables as Spark DataFrames (:class:`TableReader`: the run's
rows, filtered in Spark's tasks), derives cross-table frames with Spark joins and
aggregations, and validates each frame: GX's expectations say which metrics they
need and judge them, Spark's tasks compute them (:mod:`core.quality_metrics`). The
rows never reach the driver, only the metrics do (row and unexpected counts, a few
unexpected values). Outcomes keep GX's own ``ExpectationSuiteValidationResult``;
the summary is read from it.

Every table, small gold ones included, takes this one path: one engine gives
every suite the same semantics, and gold's per-key tables grow with the keys.

The GX context is created once per process and reused: building one costs seconds.
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from core.errors import DkgError
from core.tables.base import TableBackend
from core.tables.catalog import read_delta
from core.warehouse import Warehouse

if TYPE_CHECKING:
    from great_expectations import ExpectationSuite
    from great_expectations.core import ExpectationSuiteValidationResult
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.types import StructType

__all__ = [
    "Check",
    "DataQualityError",
    "Failure",
    "SuiteOutcome",
    "TableReader",
    "TableRef",
    "empty_frame",
    "format_summary",
    "new_suite",
    "prepare_in_background",
    "run_checks",
    "validate_frame",
]

logger = logging.getLogger(__name__)


class DataQualityError(DkgError, ValueError):
    """An expectation failed; the message names the suite, expectation and column."""


@dataclass(frozen=True)
class TableRef:
    """A table a check reads: ``<layer>.<table>``, optionally only some columns."""

    layer: str
    table: str
    columns: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Check:
    """One suite and how to build the frame it validates.

    Attributes:
        suite: the GX suite, named ``<layer>.<subject>``.
        tables: the tables read (each filtered to the run) and passed to ``derive``
            in this order; a missing table is passed as ``None``.
        derive: builds the validated frame from the session and the tables' frames
            (Spark DataFrames, lazily: the work runs in Spark's tasks); by default the
            first table itself.
    """

    suite: ExpectationSuite
    tables: tuple[TableRef, ...]
    derive: Callable[..., DataFrame] | None = None

    @property
    def layer(self) -> str:
        """The layer this check belongs to (the suite name's prefix)."""
        return self.suite.name.split(".", 1)[0]


@dataclass(frozen=True)
class Failure:
    """One failed expectation, readable."""

    suite: str
    expectation: str
    column: str
    observed: str

    def __str__(self) -> str:
        """``suite: expectation(column): observed``."""
        return f"{self.suite}: {self.expectation}({self.column}): {self.observed}"


@dataclass(frozen=True)
class SuiteOutcome:
    """GX's validation result of one suite for one run."""

    run_id: str
    suite: str
    result: ExpectationSuiteValidationResult
    examples: int = 3
    failures: list[Failure] = field(init=False)

    def __post_init__(self) -> None:
        failed = [r for r in self.result.results if not r.success]
        object.__setattr__(self, "failures", [self._failure(r) for r in failed])

    @property
    def success(self) -> bool:
        """True when every expectation held."""
        return bool(self.result.success)

    @property
    def evaluated(self) -> int:
        """Number of expectations evaluated."""
        return len(self.result.results)

    def _failure(self, result: Any) -> Failure:
        config = result.expectation_config
        return Failure(self.suite, config.type, _columns(config.kwargs),
                       _observed(result, self.examples))  # fmt: skip


def _columns(kwargs: dict[str, Any]) -> str:
    if "column" in kwargs:
        return str(kwargs["column"])
    if "column_list" in kwargs:
        return ", ".join(map(str, kwargs["column_list"]))
    if "column_A" in kwargs:
        return f"{kwargs['column_A']} = {kwargs['column_B']}"
    return "table"


def _observed(result: Any, examples: int) -> str:
    info = result.exception_info or {}
    if info.get("raised_exception"):
        return f"error: {str(info.get('exception_message', '')).splitlines()[0]}"
    details = result.result or {}
    if "observed_value" in details:
        return f"observed {details['observed_value']}"
    if "unexpected_count" in details:
        shown = list(details.get("partial_unexpected_list", [])[:examples])
        return (f"{details['unexpected_count']} of {details.get('element_count', '?')} rows "
                f"unexpected, e.g. {shown}")  # fmt: skip
    return "failed"


_CONTEXT_LOCK = threading.Lock()


def _context() -> Any:
    with _CONTEXT_LOCK:  # one context, whichever thread asks first
        return _new_context()


def prepare_in_background() -> None:
    """Import GX and build its context on a thread of its own, so that a gate run later
    finds it ready: the import takes about 3 s of the driver's CPU, which waits on Spark
    while a job's first stage runs."""
    threading.Thread(target=_context, name="dkg-gx-import").start()


@functools.cache
def _new_context() -> Any:
    # Imported here: GX takes seconds to import, and most commands never validate.
    import great_expectations as gx
    from great_expectations.data_context.types.base import ProgressBarsConfig

    # GX pins this module's logger to INFO at import; let the application's levels govern.
    logging.getLogger("great_expectations.data_context.types.base").setLevel(logging.NOTSET)
    context = gx.get_context(mode="ephemeral")
    context.variables.progress_bars = ProgressBarsConfig(globally=False)
    return context


def new_suite(name: str, expectations: Iterable[Any]) -> ExpectationSuite:
    """A GX suite ``name`` holding ``expectations`` (GX wants its context to exist first)."""
    import great_expectations as gx

    _context()
    return gx.ExpectationSuite(name=name, expectations=list(expectations))


def empty_frame(spark: SparkSession, schema: str | StructType) -> DataFrame:
    """No rows of ``schema`` (DDL or a ``StructType``), without a Python task.

    ``createDataFrame([])`` runs its empty partitions through a Python RDD, whose
    workers Spark forks from a second daemon (its environment differs from the SQL
    workers'): seconds of imports in the first gate of every job.
    """
    return spark.createDataFrame(spark.sparkContext.emptyRDD(), schema)


def _nan_as_null(frame: DataFrame) -> DataFrame:
    # pandas counts NaN as missing and Spark does not: a NaN metric must still fail
    # "not null" and be skipped by range checks, as the suites were written for.
    from pyspark.sql import functions as F
    from pyspark.sql.types import DoubleType, FloatType

    floats = {f.name for f in frame.schema.fields if isinstance(f.dataType, DoubleType | FloatType)}
    if not floats:
        return frame
    return frame.select(*(F.when(~F.isnan(F.col(c)), F.col(c)).alias(c) if c in floats
                          else F.col(c) for c in frame.columns))  # fmt: skip


def validate_frame(suite: ExpectationSuite, frame: DataFrame, run_id: str = "",
                   examples: int = 3) -> SuiteOutcome:  # fmt: skip
    """Validate ``frame`` against ``suite``: Spark's tasks compute the metrics, GX judges them.

    Only GX's metrics reach the driver: counts, and up to ``examples`` unexpected
    values of a rule that failed (:mod:`core.quality_metrics`).
    """
    from core.quality_metrics import validate_suite

    result = validate_suite(suite, _nan_as_null(frame), examples)
    return SuiteOutcome(run_id, suite.name, result, examples)


class TableReader:
    """Hands out one run's rows of warehouse tables as lazy Spark DataFrames.

    The driver only plans: Spark's tasks read the Delta files (``format("delta")``
    under delta-spark, else the ``dkg_delta`` source) and drop other runs' rows.
    """

    def __init__(self, spark: SparkSession, warehouse: Warehouse, backend: TableBackend) -> None:
        """Remember where to read; nothing is read yet."""
        self.spark = spark
        self._warehouse = warehouse
        self._backend = backend

    def run_frame(self, ref: TableRef, run_id: str) -> DataFrame | None:
        """The run's rows of ``ref`` (only its columns, when given), or None if no table."""
        from pyspark.sql import functions as F

        path = self._warehouse.table_uri(ref.layer, ref.table)
        if self._backend.version(path) is None:
            return None
        columns = None if ref.columns is None else [*ref.columns, "run_id"]
        table = read_delta(self.spark, path, storage=self._warehouse.storage, columns=columns)
        return table.filter(F.col("run_id") == run_id).drop("run_id")


def _frame(check: Check, reader: TableReader, run_id: str) -> DataFrame:
    frames = [reader.run_frame(ref, run_id) for ref in check.tables]
    if check.derive is not None:
        return check.derive(reader.spark, *frames)
    if frames[0] is not None:
        return frames[0]
    # A missing table validates as a frame without columns: every expectation on
    # it then fails with GX's "column does not exist", which names the problem.
    from pyspark.sql.types import StructType

    return empty_frame(reader.spark, StructType([]))


def run_checks(checks: Sequence[Check], reader: TableReader, run_id: str,
               examples: int = 3) -> list[SuiteOutcome]:  # fmt: skip
    """Validate every check's frame for one run; outcomes in the checks' order.

    The checks' Spark jobs are submitted from threads of their own: a run's tables
    are often small, and one check's few short jobs leave the executors idle.
    """

    def validate(check: Check) -> SuiteOutcome:
        outcome = validate_frame(check.suite, _frame(check, reader, run_id), run_id, examples)
        logger.debug("run %s: %s: %d/%d expectations passed", run_id, outcome.suite,
                     outcome.evaluated - len(outcome.failures), outcome.evaluated)  # fmt: skip
        return outcome

    if len(checks) <= 1:
        return [validate(check) for check in checks]
    with ThreadPoolExecutor(max_workers=len(checks), thread_name_prefix="dkg-check") as pool:
        return list(pool.map(validate, checks))


def format_summary(outcomes: Sequence[SuiteOutcome]) -> str:
    """Per run and suite: passed/failed counts and each failed expectation's observation."""
    lines: list[str] = []
    width = max((len(o.suite) for o in outcomes), default=0)
    for run_id in dict.fromkeys(o.run_id for o in outcomes):
        lines.append(f"run {run_id}")
        for outcome in (o for o in outcomes if o.run_id == run_id):
            passed = outcome.evaluated - len(outcome.failures)
            verdict = "ok" if outcome.success else "FAILED"
            lines.append(f"  {outcome.suite:<{width}}  {passed:>3} passed  "
                         f"{len(outcome.failures):>3} failed  {verdict}")  # fmt: skip
            lines.extend(
                f"    - {f.expectation}({f.column}): {f.observed}" for f in outcome.failures
            )
    total = sum(o.evaluated for o in outcomes)
    failed = sum(len(o.failures) for o in outcomes)
    lines.append(f"{len(outcomes)} suites, {total} expectations: {total - failed} passed, "
                 f"{failed} failed")  # fmt: skip
    return "\n".join(lines)
