"""Python data sources that carry their connection with them.

Spark hands a Python data source only its string options, and options show in
query plans. Connection settings (Kafka credentials, object-store keys) travel
instead as class attributes of a subclass made for them: Spark pickles the
class by value to its planner process and to every task. The subclass gets a
format name of its own, derived from what it carries, so two connections in one
session never share one.
"""

from __future__ import annotations

import hashlib
import logging
import pickle
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import SparkSession
    from pyspark.sql.datasource import DataSource

__all__ = ["bind_source", "register_once"]

logger = logging.getLogger(__name__)


def _registered(spark: SparkSession, name: str) -> bool:
    # No public API asks this; registering again works but logs a warning each time.
    try:
        manager = spark._jsparkSession.sessionState().dataSourceManager()  # noqa: SLF001
        return bool(manager.dataSourceExists(name))
    except Exception:  # py4j or API drift: fall back to registering again
        logger.debug("cannot query registered data sources", exc_info=True)
        return False


def register_once(spark: SparkSession, source: type[DataSource]) -> str:
    """Register ``source`` in this session unless its name is taken; returns the name."""
    name = source.name()
    if not _registered(spark, name):
        spark.dataSource.register(source)
    return name


def bind_source(spark: SparkSession, base: type[DataSource], **attributes: Any) -> str:
    """Register a subclass of ``base`` holding ``attributes``; returns its format name."""
    digest = hashlib.sha256(pickle.dumps(sorted(attributes.items()))).hexdigest()[:16]
    name = f"{base.name()}_{digest}"
    bound = type(f"{base.__name__}_{digest}", (base,),
                 {**attributes, "name": classmethod(lambda cls: name)})  # fmt: skip
    return register_once(spark, bound)
