"""What the tasks of one job run share, as the tasks of a Databricks job cluster do.

The tasks run one after another in the job's process, so they share its Spark
session: the first task that needs Spark starts it (about 10 s) and the others
find it running (``build_spark`` returns the running session, with each task's
runtime SQL settings applied to it). Before a task that uses the embedded
broker runs, the broker its settings name is started unless it runs already,
so every task finds it running and none stops it. At the end of the job the
cluster stops what it started: the broker, and the session unless the caller
had one before the job (a test's, say).

A task whose Spark settings cannot apply to the running session (another
master, driver memory, or a setting fixed at start-up) runs in a process of its
own, like a task with its own cluster.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.config.secrets import reveal

if TYPE_CHECKING:
    from core.config import Settings
    from core.config.models import SparkConfig
    from core.kafka.broker import LocalBroker
    from pipelines.tasks import TaskResources

__all__ = ["JobCluster"]

logger = logging.getLogger(__name__)

_FIXED_AT_START = ("spark.master", "spark.driver.memory")


def _session() -> Any:
    """The running Spark session of this process, or None (without importing pyspark)."""
    if "pyspark" not in sys.modules:
        return None
    from pyspark.sql import SparkSession

    return SparkSession.getActiveSession()


def _spark_mismatch(config: SparkConfig) -> str | None:
    """Why a task with Spark settings ``config`` cannot use the running session, or None."""
    session = _session()
    if session is None:
        return None
    running = session.sparkContext.getConf()
    wanted = {"spark.master": config.master, "spark.driver.memory": config.driver_memory}
    for key, value in {**wanted, **reveal(config.conf)}.items():
        if key not in _FIXED_AT_START and session.conf.isModifiable(key):
            continue  # applied to the running session when the task asks for it
        have = running.get(key, None)
        if have != str(value):
            return f"its {key} is {value}, the job's Spark session's {have}"
    return None


class JobCluster:
    """The broker and Spark session of one job run; :meth:`close` stops what it started."""

    def __init__(self) -> None:
        """Note whether a Spark session runs already: it is the caller's, never stopped here."""
        self._callers_session = _session() is not None
        self._started: list[LocalBroker] = []

    def prepare(self, target: str, arguments: Sequence[str]) -> TaskResources | None:
        """Start the embedded broker a task needs; what the task uses (None: unknown).

        Args:
            target: The task's ``module:function``.
            arguments: Its arguments, references filled in.
        """
        from pipelines.tasks import task_resources

        resources = task_resources(target, arguments)
        if resources is not None and resources.kafka:
            self._ensure_broker(resources.loaded.settings)
        return resources

    @staticmethod
    def own_process_reason(resources: TaskResources | None) -> str | None:
        """Why the task must run in a process of its own, or None to run it here."""
        if resources is None or not resources.spark:
            return None
        return _spark_mismatch(resources.loaded.settings.spark)

    def _ensure_broker(self, settings: Settings) -> None:
        from core.kafka.admin import BrokerError
        from core.kafka.broker import LocalBroker

        if settings.kafka.bootstrap_servers:
            return  # the user's Kafka, or the embedded broker named by its address
        embedded = settings.kafka.embedded
        broker = LocalBroker(Path(embedded.run_dir).absolute(), embedded.port)
        if broker.status().running:
            return
        try:
            broker.start()
        except BrokerError as exc:
            # The task starts it itself, and says why it cannot, in its own words.
            logger.debug("the job could not start the embedded broker: %s", exc)
            return
        self._started.append(broker)

    @staticmethod
    def broker_pid(resources: TaskResources | None) -> int | None:
        """The pid of the embedded broker a task used (None: no broker or the user's Kafka)."""
        from core.kafka.broker import LocalBroker

        if resources is None or not resources.kafka:
            return None
        settings = resources.loaded.settings
        if settings.kafka.bootstrap_servers:
            return None
        return LocalBroker(Path(settings.kafka.embedded.run_dir).absolute()).status().pid

    @staticmethod
    def spark_application() -> str | None:
        """The running Spark session's application id, or None."""
        session = _session()
        return None if session is None else str(session.sparkContext.applicationId)

    @staticmethod
    def cancel_spark_work() -> None:
        """Stop the streaming queries and jobs a task left running (after its timeout)."""
        session = _session()
        if session is None:
            return
        for query in session.streams.active:
            query.stop()
        session.sparkContext.cancelAllJobs()

    def close(self) -> None:
        """Stop the session the job started and the brokers the cluster started."""
        session = _session()
        if session is not None and not self._callers_session:
            session.stop()
        while self._started:
            self._started.pop().stop()
