"""GX expectations judged on metrics that Spark's tasks compute in a few passes.

GX's own Spark engine computes each metric of each expectation as its own Spark
job (about three per expectation, ~190 for the project's suites): on two cores
the gates of a 1 M-message run took 30 s. Here GX still says which metrics every
expectation needs (``get_validation_dependencies``) and still judges them
(``metrics_validate``: ``mostly``, result format, observed values), but the
metrics come from one aggregation over the frame, plus one grouping per
compound-uniqueness rule and, only for rules that failed, one small job for
their examples. Only counts and a few example values reach the driver.

The map metrics computed are those of the expectations the suites use (non-null,
between, in-set, column-pair equality, compound uniqueness) and ``table.row_count``;
an expectation needing anything else is refused with the metric's name.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pyspark.sql import Column
from pyspark.sql import functions as F

from core.errors import DkgError

if TYPE_CHECKING:
    from great_expectations import ExpectationSuite
    from great_expectations.core import (
        ExpectationSuiteValidationResult,
        ExpectationValidationResult,
    )
    from great_expectations.expectations.expectation import Expectation
    from pyspark.sql import DataFrame

__all__ = ["UnsupportedExpectation", "validate_suite"]

_ROW_COUNT = "table.row_count"
_NONE_SUFFIXES = ("unexpected_index_list", "unexpected_index_query")
"""Row indexes: a Spark frame has none (GX's Spark engine returns none either)."""


class UnsupportedExpectation(DkgError, ValueError):
    """A suite holds an expectation whose metrics are not computed here."""


@dataclass(frozen=True)
class _Rule:
    """One map metric's rows: which are considered and which of those are unexpected."""

    considered: Column
    unexpected: Column
    shown: tuple[str, ...]  # the columns an unexpected example shows


def _present(column: str) -> Column:
    return F.col(column).isNotNull()


def _between(column: str, kwargs: dict[str, Any]) -> Column:
    value = F.col(column)
    low, high = kwargs.get("min_value"), kwargs.get("max_value")
    inside = F.lit(True)
    if low is not None:
        inside &= value > low if kwargs.get("strict_min") else value >= low
    if high is not None:
        inside &= value < high if kwargs.get("strict_max") else value <= high
    return ~inside


def _pair_considered(a: str, b: str, ignore_row_if: str) -> Column:
    if ignore_row_if == "both_values_are_missing":
        return _present(a) | _present(b)
    if ignore_row_if == "either_value_is_missing":
        return _present(a) & _present(b)
    return F.lit(True)


def _compound_considered(columns: Sequence[str], ignore_row_if: str) -> Column:
    present = [_present(c) for c in columns]
    if ignore_row_if == "all_values_are_missing":
        return _any(present)
    if ignore_row_if == "any_value_is_missing":
        return _all(present)
    return F.lit(True)


def _any(columns: Sequence[Column]) -> Column:
    return functools.reduce(operator.or_, columns)


def _all(columns: Sequence[Column]) -> Column:
    return functools.reduce(operator.and_, columns)


_ROW_RULES: dict[str, Callable[[dict[str, Any], dict[str, Any]], _Rule]] = {
    "column_values.nonnull": lambda d, _: _Rule(
        F.lit(True), F.col(d["column"]).isNull(), (d["column"],)),
    "column_values.between": lambda d, v: _Rule(
        _present(d["column"]), _between(d["column"], v), (d["column"],)),
    "column_values.in_set": lambda d, v: _Rule(
        _present(d["column"]), ~F.col(d["column"]).isin(list(v["value_set"])), (d["column"],)),
    "column_pair_values.equal": lambda d, _: _Rule(
        _pair_considered(d["column_A"], d["column_B"], d["ignore_row_if"]),
        ~F.col(d["column_A"]).eqNullSafe(F.col(d["column_B"])), (d["column_A"], d["column_B"])),
}  # fmt: skip
"""Map metrics decided row by row: one aggregation over the frame counts them all."""

_UNIQUE = "compound_columns.unique"


def _split(metric_name: str) -> tuple[str, str]:
    """``column_values.between.unexpected_count`` -> (``column_values.between``, suffix)."""
    base, _, suffix = metric_name.rpartition(".")
    return base, suffix


def _domain_columns(domain: dict[str, Any]) -> list[str]:
    if "column" in domain:
        return [domain["column"]]
    if "column_list" in domain:
        return list(domain["column_list"])
    return [domain[k] for k in ("column_A", "column_B") if k in domain]


class _FrameMetrics:
    """Computes the metrics GX asks for over one frame, batching them into few Spark jobs."""

    def __init__(self, frame: DataFrame, examples: int) -> None:
        self._frame = frame
        self._examples = examples
        self._counts: dict[Any, Column] = {}  # metric id -> its aggregate over the frame
        self._rules: dict[Any, _Rule] = {}  # metric id of unexpected values -> their rule
        # metric id -> (columns, ignore_row_if, suffix) of a compound-uniqueness metric
        self._uniques: dict[Any, tuple[tuple[str, ...], str, str]] = {}
        self._values: dict[Any, Any] = {}

    def want(self, configuration: Any) -> None:
        """Plan ``configuration``'s metric (a GX ``MetricConfiguration``)."""
        name, key = configuration.metric_name, configuration.id
        domain = dict(configuration.metric_domain_kwargs)
        values = dict(configuration.metric_value_kwargs or {})
        if domain.get("row_condition"):
            raise UnsupportedExpectation(f"metric {name}: row conditions are not supported")
        base, suffix = _split(name)
        if name == _ROW_COUNT:
            self._counts[key] = F.count(F.lit(1))
        elif suffix in _NONE_SUFFIXES:
            self._values[key] = None
        elif base == _UNIQUE and suffix in _COMPUTED:
            self._uniques[key] = (tuple(domain["column_list"]), domain["ignore_row_if"], suffix)
        elif base in _ROW_RULES and suffix in _COMPUTED:
            rule = _ROW_RULES[base](domain, values)
            if suffix == "unexpected_values":
                self._rules[key] = rule
            else:
                counted = F.lit(True) if suffix == "filtered_row_count" else rule.unexpected
                self._counts[key] = F.count(F.when(rule.considered & counted, 1))
        else:
            raise UnsupportedExpectation(f"metric {name} is not computed by the Spark gates")

    def compute(self) -> dict[Any, Any]:
        """Every planned metric's value, keyed by metric id."""
        values = dict(self._values)
        # One pass counts every rule, and also each rule with examples to show: only
        # a rule that failed costs a job for them.
        failing = [F.count(F.when(rule.considered & rule.unexpected, 1))
                   for rule in self._rules.values()]  # fmt: skip
        aggregates = [*self._counts.values(), *failing]
        if aggregates:
            row = self._frame.agg(*(c.alias(f"m{i}") for i, c in enumerate(aggregates))).first()
            values.update({key: int(count) for key, count in zip(self._counts, row, strict=False)})
            failed = row[len(self._counts):]
            for (key, rule), count in zip(self._rules.items(), failed, strict=True):
                values[key] = self._unexpected_values(rule) if count else []
        for (columns, ignore), wanted in _by_domain(self._uniques).items():
            found = self._unique(list(columns), ignore)
            values.update({key: found[suffix] for key, suffix in wanted})
        return values

    def _unique(self, columns: list[str], ignore_row_if: str) -> dict[str, Any]:
        groups = (self._frame.filter(_compound_considered(columns, ignore_row_if))
                  .groupBy(*columns).agg(F.count(F.lit(1)).alias("_rows")))  # fmt: skip
        repeated = F.col("_rows") > 1
        totals = groups.agg(F.sum(F.when(repeated, F.col("_rows"))).alias("unexpected"),
                            F.sum("_rows").alias("considered")).first()  # fmt: skip
        unexpected = int(totals["unexpected"] or 0)
        examples: list[dict[str, Any]] = []
        if unexpected:
            for group in groups.filter(repeated).limit(self._examples).collect():
                examples += [{c: group[c] for c in columns}] * int(group["_rows"])
        return {"unexpected_count": unexpected, "filtered_row_count": int(totals["considered"] or 0),
                "unexpected_values": examples[: self._examples]}  # fmt: skip

    def _unexpected_values(self, rule: _Rule) -> list[Any]:
        rows = (self._frame.filter(rule.considered & rule.unexpected).select(*rule.shown)
                .limit(self._examples).collect())  # fmt: skip
        if len(rule.shown) == 1:
            return [row[0] for row in rows]
        return [tuple(row) for row in rows]


_COMPUTED = ("unexpected_count", "filtered_row_count", "unexpected_values")


def _by_domain(uniques: dict[Any, tuple[tuple[str, ...], str, str]]) -> dict[tuple, list]:
    grouped: dict[tuple, list] = {}
    for key, (columns, ignore, suffix) in uniques.items():
        grouped.setdefault((columns, ignore), []).append((key, suffix))
    return grouped


def _result_format(examples: int) -> dict[str, Any]:
    return {"result_format": {"result_format": "SUMMARY", "partial_unexpected_count": examples}}


def _missing_column(expectation: Expectation, column: str) -> ExpectationValidationResult:
    from great_expectations.core import ExpectationValidationResult

    # As GX reports a metric it could not compute: failed, with the reason.
    return ExpectationValidationResult(
        success=False, expectation_config=expectation.configuration,
        exception_info={"raised_exception": True, "exception_traceback": None,
                        "exception_message": f'The column "{column}" in BatchData does not exist.'},
    )  # fmt: skip


def validate_suite(suite: ExpectationSuite, frame: DataFrame,
                   examples: int = 3) -> ExpectationSuiteValidationResult:  # fmt: skip
    """GX's result of ``suite`` over ``frame``, its metrics computed by Spark's tasks.

    Raises:
        UnsupportedExpectation: an expectation needs a metric not computed here.
    """
    from great_expectations.core import ExpectationSuiteValidationResult

    examples = max(examples, 1)
    metrics = _FrameMetrics(frame, examples)
    missing: dict[int, str] = {}
    for index, expectation in enumerate(suite.expectations):
        needed = expectation.get_validation_dependencies(
            execution_engine=None, runtime_configuration=_result_format(examples)
        ).metric_configurations.values()
        absent = [c for m in needed for c in _domain_columns(dict(m.metric_domain_kwargs))
                  if c not in frame.columns]  # fmt: skip
        if absent:
            missing[index] = absent[0]
            continue
        for configuration in needed:
            metrics.want(configuration)
    values = metrics.compute()
    results = [
        _missing_column(expectation, missing[index]) if index in missing
        else expectation.metrics_validate(values, runtime_configuration=_result_format(examples))
        for index, expectation in enumerate(suite.expectations)
    ]  # fmt: skip
    return ExpectationSuiteValidationResult(
        success=all(r.success for r in results), results=results, suite_name=suite.name,
        statistics={"evaluated_expectations": len(results),
                    "successful_expectations": sum(bool(r.success) for r in results)},
    )  # fmt: skip
