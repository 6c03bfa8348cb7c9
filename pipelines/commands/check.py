"""``dkg check``: run the data-quality suites over the warehouse's runs and summarize.

Runs come from ``gold.runs`` (every run there, or the one ``--run-id`` names);
each run's rows of every table are validated with the suites of
``bronze/``, ``silver/`` and ``gold/`` ``expectations.py``, as Spark jobs (the
command starts a Spark session, as ``dkg run`` and ``dkg sql`` do). Exit code 0 when
every expectation holds, 1 when one fails, 2 for a usage error.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from pipelines.commands.common import UsageError, add_config_options, load_from_args

if TYPE_CHECKING:
    from core.tables.base import TableBackend
    from core.warehouse import Warehouse

__all__ = ["add_parser", "run"]


def add_parser(subparsers: Any) -> None:
    """Register ``check``."""
    parser = subparsers.add_parser(
        "check", help="validate the lakehouse tables with the data-quality suites",
        description=__doc__,
    )  # fmt: skip
    parser.add_argument("--run-id", help="check only this run (default: every run in gold.runs)")
    parser.add_argument("--warehouse", help="warehouse root: a path or s3://bucket/prefix "
                        "(warehouse.uri)")  # fmt: skip
    parser.add_argument("--layer", choices=("bronze", "silver", "gold"), action="append",
                        help="check only this layer (repeatable; default: all)")  # fmt: skip
    add_config_options(parser)
    parser.set_defaults(handler=run)


def _runs(backend: TableBackend, warehouse: Warehouse, run_id: str | None) -> list[tuple[str, int]]:
    from core.warehouse import sql_name
    from gold.schemas import RUNS

    # gold.runs holds one row per run: read on the driver, before Spark starts, so a
    # wrong --run-id or an empty warehouse is a one-line error in a second.
    path = warehouse.table_uri(*RUNS)
    runs = backend.read(path) if backend.version(path) is not None else None
    if runs is None or runs.num_rows == 0:
        raise UsageError(f"no runs in {warehouse.root} ({sql_name(RUNS)} is missing; "
                         "run `dkg run` first)")  # fmt: skip
    known = {
        row["run_id"]: int(row["workers"]) for row in runs.select(["run_id", "workers"]).to_pylist()
    }
    if run_id is None:
        return sorted(known.items())
    if run_id not in known:
        raise UsageError(
            f"unknown run id {run_id!r}; runs in {warehouse.root}: {', '.join(sorted(known))}"
        )
    return [(run_id, known[run_id])]


def run(args: argparse.Namespace) -> int:
    """Validate the chosen runs and layers; print the summary; 0 if all passed, else 1."""
    from core.quality import TableReader, format_summary
    from core.warehouse import LAYERS
    from pipelines.checks import check_run
    from pipelines.pipeline_runtime import open_runtime

    loaded = load_from_args(args, {"warehouse": "warehouse.uri"})
    config = loaded.settings.quality
    with open_runtime(loaded, app_name="dkg-check") as runtime:
        warehouse = runtime.existing_warehouse()
        runs = _runs(runtime.backend, warehouse, args.run_id)
        reader = TableReader(runtime.spark, warehouse, runtime.backend)
        layers = tuple(args.layer) if args.layer else LAYERS
        outcomes = [outcome for run_id, workers in runs
                    for outcome in check_run(reader, run_id, workers, config, layers)]  # fmt: skip
    print(format_summary(outcomes))
    return 0 if all(outcome.success for outcome in outcomes) else 1
