"""The data-quality runner: Great Expectations suites over one run's Delta tables.

Each layer declares its suites in ``<layer>/expectations.py`` as :class:`Check`
objects: a GX ``ExpectationSuite`` and the tables its frame comes from. The
runner reads those tables with the Delta backend (each table once per
:class:`TableReader`), keeps the run's rows, and validates the frame through
one ephemeral GX context with a pandas data source. Outcomes keep GX's own
``ExpectationSuiteValidationResult``; the summary is read from it.

The GX context is created once per process and reused: building one costs far
more than validating a small frame.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pandas as pd
import pyarrow.compute as pc

from core.tables.base import TableBackend
from core.warehouse import Warehouse

if TYPE_CHECKING:
    import pyarrow as pa
    from great_expectations import ExpectationSuite
    from great_expectations.core import ExpectationSuiteValidationResult

__all__ = [
    "Check",
    "DataQualityError",
    "Failure",
    "SuiteOutcome",
    "TableReader",
    "TableRef",
    "format_summary",
    "new_suite",
    "run_checks",
    "validate_frame",
]

logger = logging.getLogger(__name__)


class DataQualityError(ValueError):
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
        derive: builds the validated frame from the tables' frames; by default the
            first table itself.
    """

    suite: ExpectationSuite
    tables: tuple[TableRef, ...]
    derive: Callable[..., pd.DataFrame] | None = None

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


def _plain(value: Any) -> Any:
    # numpy scalars print as np.int64(6); show the number.
    if isinstance(value, list | tuple):
        return type(value)(_plain(v) for v in value)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value.item() if hasattr(value, "item") and hasattr(value, "dtype") else value


def _observed(result: Any, examples: int) -> str:
    info = result.exception_info or {}
    if info.get("raised_exception"):
        return f"error: {str(info.get('exception_message', '')).splitlines()[0]}"
    details = result.result or {}
    if "observed_value" in details:
        return f"observed {_plain(details['observed_value'])}"
    if "unexpected_count" in details:
        shown = _plain(list(details.get("partial_unexpected_list", [])[:examples]))
        return (f"{details['unexpected_count']} of {details.get('element_count', '?')} rows "
                f"unexpected, e.g. {shown}")  # fmt: skip
    return "failed"


@functools.cache
def _batch_definition() -> Any:
    # Imported here: GX takes seconds to import, and most commands never validate.
    import great_expectations as gx
    from great_expectations.data_context.types.base import ProgressBarsConfig

    # GX pins this module's logger to INFO at import; let the application's levels govern.
    logging.getLogger("great_expectations.data_context.types.base").setLevel(logging.NOTSET)
    context = gx.get_context(mode="ephemeral")
    context.variables.progress_bars = ProgressBarsConfig(globally=False)
    asset = context.data_sources.add_pandas("dkg").add_dataframe_asset("frame")
    return asset.add_batch_definition_whole_dataframe("whole")


def new_suite(name: str, expectations: Iterable[Any]) -> ExpectationSuite:
    """A GX suite ``name`` holding ``expectations`` (GX wants its context to exist first)."""
    import great_expectations as gx

    _batch_definition()
    return gx.ExpectationSuite(name=name, expectations=list(expectations))


def validate_frame(suite: ExpectationSuite, frame: pd.DataFrame, run_id: str = "",
                   examples: int = 3) -> SuiteOutcome:  # fmt: skip
    """Validate ``frame`` against ``suite`` through the shared ephemeral GX context."""
    batch = _batch_definition().get_batch(batch_parameters={"dataframe": frame})
    result_format = {"result_format": "SUMMARY", "partial_unexpected_count": max(examples, 1)}
    result = batch.validate(suite, result_format=result_format)
    return SuiteOutcome(run_id, suite.name, result, examples)


class TableReader:
    """Reads each warehouse table once and hands out one run's rows as pandas."""

    def __init__(self, warehouse: Warehouse, backend: TableBackend) -> None:
        """Remember where to read; nothing is read yet."""
        self._warehouse = warehouse
        self._backend = backend
        self._tables: dict[tuple[str, str], pa.Table | None] = {}

    def table(self, layer: str, table: str) -> pa.Table | None:
        """The whole table as Arrow, or None when it does not exist."""
        if (layer, table) not in self._tables:
            path = self._warehouse.table_uri(layer, table)
            exists = self._backend.version(path) is not None
            self._tables[(layer, table)] = self._backend.read(path) if exists else None
        return self._tables[(layer, table)]

    def run_frame(self, ref: TableRef, run_id: str) -> pd.DataFrame | None:
        """The run's rows of ``ref`` (only its columns, when given), or None if no table."""
        table = self.table(ref.layer, ref.table)
        if table is None:
            return None
        rows = table.filter(pc.equal(table["run_id"], run_id))
        if ref.columns is not None:
            rows = rows.select(list(ref.columns))
        return rows.to_pandas()

    def forget(self, layers: Iterable[str]) -> None:
        """Drop cached tables of ``layers`` (they were written since they were read)."""
        for key in [k for k in self._tables if k[0] in set(layers)]:
            del self._tables[key]


def _frame(check: Check, reader: TableReader, run_id: str) -> pd.DataFrame:
    frames = [reader.run_frame(ref, run_id) for ref in check.tables]
    if check.derive is not None:
        return check.derive(*frames)
    # A missing table validates as a frame without columns: every expectation on
    # it then fails with GX's "column does not exist", which names the problem.
    return frames[0] if frames[0] is not None else pd.DataFrame()


def run_checks(checks: Sequence[Check], reader: TableReader, run_id: str,
               examples: int = 3) -> list[SuiteOutcome]:  # fmt: skip
    """Validate every check's frame for one run, in order."""
    outcomes = []
    for check in checks:
        outcome = validate_frame(check.suite, _frame(check, reader, run_id), run_id, examples)
        logger.debug("run %s: %s: %d/%d expectations passed", run_id, outcome.suite,
                    outcome.evaluated - len(outcome.failures), outcome.evaluated)  # fmt: skip
        outcomes.append(outcome)
    return outcomes


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
