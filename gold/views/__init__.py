"""Gold views for analysis in SQL, one ``<name>.sql`` file each in this folder.

Each file holds the ``SELECT`` of view ``gold.<name>``. :func:`register_views`
creates them in the session's catalog (after ``register_tables``): views are
catalog views rather than temporary views because only those can live in the
``gold`` namespace. A view whose tables do not exist yet (an empty warehouse)
is left out rather than failing.
"""

from __future__ import annotations

import logging
from importlib import resources
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["register_views", "view_definitions"]

logger = logging.getLogger(__name__)


def view_definitions() -> dict[str, str]:
    """``{view name: SELECT text}`` for every ``*.sql`` file of this package, sorted by name."""
    files = sorted((f for f in resources.files(__package__).iterdir() if f.name.endswith(".sql")),
                   key=lambda f: f.name)  # fmt: skip
    return {f.name.removesuffix(".sql"): f.read_text(encoding="utf-8") for f in files}


def register_views(spark: SparkSession) -> list[str]:
    """Create or replace every gold view whose tables exist; returns their names."""
    from pyspark.errors import AnalysisException

    created = []
    for name, select in view_definitions().items():
        try:
            spark.sql(f"CREATE OR REPLACE VIEW gold.`{name}` AS\n{select}")
        except AnalysisException as exc:
            logger.debug("view gold.%s not created: %s", name, str(exc).splitlines()[0])
            continue
        created.append(f"gold.{name}")
    logger.debug("registered views %s", ", ".join(created) or "(none)")
    return created
