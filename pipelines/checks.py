"""Every layer's data-quality suites for a run, on demand (``dkg check``) or as job gates.

The suites live in ``bronze/``, ``silver/`` and ``gold/`` ``expectations.py``;
this module picks them per layer and runs them through
:mod:`core.quality`. A gate validates one layer of one run after the
job wrote it and raises :class:`DataQualityError` naming what broke.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from core.config import QualityConfig
from core.logs import RESULT
from core.quality import (
    Check,
    DataQualityError,
    SuiteOutcome,
    TableReader,
    prepare_in_background,
    run_checks,
)
from core.tables.base import TableBackend
from core.warehouse import LAYERS, Warehouse

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["check_run", "layer_checks", "quality_gate"]

logger = logging.getLogger(__name__)


def layer_checks(layers: Sequence[str], config: QualityConfig, workers: int) -> list[Check]:
    """The checks of ``layers`` (in data-flow order) for a run over ``workers`` workers."""
    from bronze import expectations as bronze
    from gold import expectations as gold
    from silver import expectations as silver

    builders = {"bronze": bronze.checks, "silver": silver.checks, "gold": gold.checks}
    unknown = sorted(set(layers) - set(builders))
    if unknown:
        raise ValueError(f"unknown layer(s) {unknown}; choose from {list(LAYERS)}")
    return [c for layer in LAYERS if layer in layers for c in builders[layer](config, workers)]


def check_run(reader: TableReader, run_id: str, workers: int, config: QualityConfig,
              layers: Sequence[str] = LAYERS) -> list[SuiteOutcome]:  # fmt: skip
    """Validate ``layers`` of one run; one outcome per suite."""
    return run_checks(layer_checks(layers, config, workers), reader, run_id, config.examples)


def quality_gate(spark: SparkSession, warehouse: Warehouse, backend: TableBackend, run_id: str,
                 workers: int, config: QualityConfig) -> Callable[[str], None]:  # fmt: skip
    """A job's ``after_stage`` hook: validate the layer just written, fail on any broken rule.

    The suites run as Spark jobs in the job's session. Each layer's verdict is a
    detail (``dkg -v``); once the last layer (gold) passed, one line gives the run's.

    Raises (from the returned callable):
        DataQualityError: naming the run, suite, expectation, column and observation.
    """

    prepare_in_background()
    passed: dict[str, int] = {}
    seconds = [0.0]

    def gate(layer: str) -> None:
        started = time.monotonic()
        outcomes = check_run(TableReader(spark, warehouse, backend), run_id, workers, config, (layer,))
        failures = [failure for outcome in outcomes for failure in outcome.failures]
        if failures:
            more = f" (and {len(failures) - 1} more)" if len(failures) > 1 else ""
            raise DataQualityError(f"run {run_id}: {layer} failed its checks: {failures[0]}{more}")
        # No duration here: the gate's step line has it.
        logger.info("run %s: %s passed %d data-quality suites", run_id, layer, len(outcomes))
        passed[layer] = len(outcomes)
        seconds[0] += time.monotonic() - started
        if layer == LAYERS[-1]:
            _log_verdict(run_id, passed, seconds[0])

    return gate


def _log_verdict(run_id: str, passed: dict[str, int], seconds: float) -> None:
    layers = ", ".join(f"{layer} {count}" for layer, count in passed.items())
    logger.info("run %s: data quality passed, %d suites in %.1f s (%s)", run_id,
                sum(passed.values()), seconds, layers, extra=RESULT)  # fmt: skip
