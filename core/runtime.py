"""The runtime of a command: its settings, the warehouse, Kafka, Spark and the table backend.

Commands parse their options into settings (:mod:`core.config`) and open one
:class:`Runtime`; it builds each piece on first use, once:

- the warehouse, from ``warehouse.*``;
- the Kafka clients: the user's Kafka when ``kafka.bootstrap_servers`` names one
  (checked reachable), else the embedded broker of ``kafka.embedded.run_dir``,
  reused when it runs already (``dkg kafka up``), otherwise started here and
  stopped when the runtime closes (writers to it wait until it saved their
  messages to disk: see :meth:`~core.kafka.broker.LocalBroker.wait_saved`);
- the Spark session, from ``spark.*``;
- the table backend, chosen once: delta-spark when the session can load its
  jars, else delta-rs on the warehouse's storage.
"""

from __future__ import annotations

import logging
from functools import cached_property
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

from core.config import LoadedSettings, Settings
from core.config.secrets import reveal
from core.kafka.admin import check_reachable
from core.kafka.broker import LocalBroker
from core.kafka.client import KafkaClient
from core.storage import file_in_the_way, storage_for
from core.warehouse import Warehouse, WarehouseError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from core.tables.base import TableBackend

__all__ = ["Runtime"]

logger = logging.getLogger(__name__)


class Runtime:
    """What a command runs on; a context manager that stops what it started.

    Args:
        loaded: the settings with their origins.
        app_name: the Spark application's name.
        python_daemon: the module Spark's Python workers fork from (see
            :func:`~core.spark.session.build_spark`).
    """

    def __init__(self, loaded: LoadedSettings, app_name: str = "dkg",
                 python_daemon: str | None = None) -> None:  # fmt: skip
        self.loaded = loaded
        self.app_name = app_name
        self.python_daemon = python_daemon
        self._started_broker: LocalBroker | None = None
        self._spark: SparkSession | None = None

    @property
    def settings(self) -> Settings:
        """The effective settings."""
        return self.loaded.settings

    @cached_property
    def warehouse(self) -> Warehouse:
        """The warehouse (checked writable)."""
        config = self.settings.warehouse
        return Warehouse(config.uri, reveal(config.storage_options), config.state_dir)

    def existing_warehouse(self) -> Warehouse:
        """The warehouse, which must exist already (commands that only read it).

        Raises:
            StorageError: the store cannot be reached or has no such bucket.
            WarehouseError: nothing is at ``warehouse.uri``.
        """
        config = self.settings.warehouse
        storage = storage_for(config.uri, reveal(config.storage_options))
        if not storage.exists(storage.root):
            # Asked only to explain a missing root: credentials scoped to a prefix may
            # not be allowed to look at the bucket itself.
            storage.check_bucket()
            blocking = file_in_the_way(Path(storage.root)) if storage.local else None
            why = (f": {blocking} is a file, not a folder" if blocking
                   else " (run `dkg run` first, or --warehouse)")  # fmt: skip
            raise WarehouseError(f"no warehouse at {storage.root}{why}")
        return self.warehouse

    @property
    def embedded_broker(self) -> LocalBroker:
        """The embedded broker of the settings (running or not)."""
        embedded = self.settings.kafka.embedded
        return LocalBroker(embedded.run_dir, embedded.port)

    @cached_property
    def kafka(self) -> KafkaClient:
        """Clients of the user's Kafka, or of the embedded broker (started if needed)."""
        config = self.settings.kafka
        if config.bootstrap_servers:
            check_reachable(config.bootstrap_servers)
            return KafkaClient.from_config(config, config.bootstrap_servers)
        broker = self.embedded_broker
        run_dir = str(broker.run_dir)
        status = broker.status()
        if status.running and status.bootstrap:
            logger.info("using the embedded broker at %s", status.bootstrap)
            return KafkaClient.from_config(config, status.bootstrap, run_dir)
        bootstrap = broker.start()
        self._started_broker = broker
        return KafkaClient.from_config(config, bootstrap, run_dir)

    @property
    def spark(self) -> SparkSession:
        """The Spark session (started on first use)."""
        if self._spark is None:
            from core.spark.session import build_spark

            config = self.settings.spark
            logger.debug("starting Spark on %s", config.master)
            self._spark = build_spark(app_name=self.app_name, master=config.master,
                                      driver_memory=config.driver_memory,
                                      shuffle_partitions=config.shuffle_partitions,
                                      extra_conf=reveal(config.conf),
                                      python_daemon=self.python_daemon)  # fmt: skip
        return self._spark

    @cached_property
    def backend(self) -> TableBackend:
        """delta-spark when its jars are found (Spark then starts), else delta-rs."""
        from core.spark.session import find_delta_jars
        from core.tables import default_backend

        spark = self._spark if self._spark is not None or not find_delta_jars() else self.spark
        return default_backend(spark, self.warehouse.storage)

    def close(self) -> None:
        """Stop the embedded broker if this runtime started it."""
        if self._started_broker is not None:
            self._started_broker.stop()
            self._started_broker = None

    def __enter__(self) -> Runtime:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:  # fmt: skip
        self.close()
