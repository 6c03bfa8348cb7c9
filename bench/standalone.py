"""A Spark standalone cluster on this machine: one master and N one-core workers, for as long
as a ``with`` block lasts.

What a user's cluster is, in miniature: the driver talks to the master by URL,
tasks run in the workers' executors (JVMs of their own, each with its Python
workers). The benchmarks run on it as they run on ``local[N]``, and the
infrastructure test runs the job on it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import TracebackType

from core.kafka.broker import free_port
from core.spark.class_archive import archive_options
from core.spark.spark_home import compiled_spark_home

__all__ = ["StandaloneCluster"]


class StandaloneCluster:
    """Master and workers as child processes (each in a session of its own, stopped with it).

    Args:
        home: folder for the logs and the workers' work dirs.
        workers: how many workers.
        cores: cores per worker.
        memory: memory per worker (Spark's notation).
    """

    def __init__(self, home: Path, workers: int = 2, cores: int = 1, memory: str = "2g") -> None:
        self.home, self.workers, self.cores, self.memory = home, workers, cores, memory
        self.url = ""
        self._processes: list[subprocess.Popen[bytes]] = []

    def _spark_class(self, args: list[str], log: Path) -> subprocess.Popen[bytes]:
        # The local driver's Spark home, whose jars its class archive was made with: the
        # daemons map it too (core.spark.class_archive).
        spark_home = compiled_spark_home()
        # The master and worker daemons only coordinate: the quick compiler alone and a
        # serial collector start them on less CPU (executors keep Spark's defaults).
        options = f"-XX:TieredStopAtLevel=1 -XX:+UseSerialGC {archive_options()}".strip()
        env = {**os.environ, "SPARK_HOME": str(spark_home), "PYSPARK_PYTHON": sys.executable,
               "SPARK_LOCAL_IP": "127.0.0.1", "SPARK_DAEMON_JAVA_OPTS": options}  # fmt: skip
        with open(log, "wb") as out:
            return subprocess.Popen([str(spark_home / "bin" / "spark-class"), *args], env=env,  # noqa: S603
                                    stdout=out, stderr=subprocess.STDOUT, start_new_session=True)  # fmt: skip

    def start(self, timeout_s: float = 60.0) -> str:
        """Start master and workers; the master's URL once every worker registered.

        Raises:
            RuntimeError: the workers did not register in time (the master's log says why).
        """
        self.home.mkdir(parents=True, exist_ok=True)
        port = free_port()
        self.url = f"spark://127.0.0.1:{port}"
        master_log = self.home / "master.log"
        self._processes.append(self._spark_class(
            ["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(port),
             "--webui-port", str(free_port())], master_log))  # fmt: skip
        for worker in range(self.workers):
            self._processes.append(self._spark_class(
                ["org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1", "--cores",
                 str(self.cores), "--memory", self.memory, "--webui-port", str(free_port()),
                 "--work-dir", str(self.home / f"work{worker}"), self.url],
                self.home / f"worker{worker}.log"))  # fmt: skip
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            text = master_log.read_text(errors="replace") if master_log.exists() else ""
            if text.count("Registering worker") >= self.workers:
                return self.url
            time.sleep(0.5)
        self.stop()
        raise RuntimeError(f"standalone cluster did not come up: {text[-2000:]}")

    def stop(self) -> None:
        """Stop every process it started."""
        for process in self._processes:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
                process.wait(timeout=30)
        self._processes.clear()

    def __enter__(self) -> StandaloneCluster:
        self.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:  # fmt: skip
        self.stop()
