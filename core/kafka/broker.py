"""The embedded Kafka-protocol broker: noida-db from PyPI, on loopback, for the local profile.

:class:`LocalBroker` starts the binary shipped inside the ``noida_db`` package
with its own data dir, records its pid in a state file so another process (a
later ``dkg run``, ``dkg kafka status``) finds it, and waits until it answers
Kafka requests. It is used only when no Kafka is named; the settings it needs
are the ``local`` profile's (``conf/local.yaml``).
"""

from __future__ import annotations

import json
import logging
import os
import signal
import socket
import subprocess
import time
from collections.abc import Mapping
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from core.kafka.admin import BrokerError, check_reachable
from core.kafka.saved import SNAPSHOT_FILE, SnapshotFormatError, saved_end_offsets

__all__ = ["BrokerStatus", "LocalBroker", "free_port"]

logger = logging.getLogger(__name__)

STATE_FILE = "broker.json"


@dataclass(frozen=True)
class BrokerStatus:
    """Whether the local broker runs, and where."""

    running: bool
    bootstrap: str | None = None
    pid: int | None = None
    data_dir: str | None = None


def free_port() -> int:
    """A TCP port on loopback that is free right now."""
    with closing(socket.socket(socket.AF_INET, socket.SOCK_STREAM)) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _binary() -> Path:
    try:
        import noida_db
    except ImportError as exc:
        raise BrokerError("the noida-db package is not installed (pip install noida-db)") from exc
    binary = Path(noida_db.__file__).with_name("noida-db")
    if not binary.is_file():
        raise BrokerError(f"noida-db binary not found at {binary}")
    return binary


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _answers(bootstrap: str) -> None:
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AdminClient

    check_reachable(bootstrap, timeout_s=2.0)
    try:
        AdminClient({"bootstrap.servers": bootstrap, "log_level": 0}).list_topics(timeout=2.0)
    except KafkaException as exc:
        raise BrokerError(f"{bootstrap} does not answer yet: {exc}") from None


class LocalBroker:
    """A noida-db Kafka broker on 127.0.0.1, managed through ``run_dir``."""

    def __init__(self, run_dir: Path, port: int | None = None) -> None:
        self.run_dir = Path(run_dir)
        self.port = port

    @property
    def _state_path(self) -> Path:
        return self.run_dir / STATE_FILE

    @property
    def data_dir(self) -> Path:
        """Where the broker keeps its snapshot."""
        return self.run_dir / "data"

    def status(self) -> BrokerStatus:
        """Running or not, from the state file and the process table."""
        try:
            state = json.loads(self._state_path.read_text())
        except (OSError, ValueError):
            return BrokerStatus(running=False)
        if not _alive(int(state["pid"])):
            return BrokerStatus(running=False, data_dir=state.get("data_dir"))
        return BrokerStatus(
            True, f"127.0.0.1:{state['port']}", int(state["pid"]), state["data_dir"]
        )

    def start(self, timeout_s: float = 30.0) -> str:
        """Start the broker (or reuse the running one); returns the bootstrap address."""
        current = self.status()
        if current.running and current.bootstrap:
            return current.bootstrap
        port = self.port or free_port()
        data_dir = self.data_dir
        data_dir.mkdir(parents=True, exist_ok=True)
        log_path = self.run_dir / "broker.log"
        command = [str(_binary()), "start", "--only", "kafka", "--host", "127.0.0.1",
                   "--kafka-port", str(port), "--data-dir", str(data_dir)]  # fmt: skip
        with open(log_path, "ab") as log:
            process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT,  # noqa: S603
                                       stdin=subprocess.DEVNULL, start_new_session=True)  # fmt: skip
        state = {"pid": process.pid, "port": port, "data_dir": str(data_dir), "log": str(log_path)}
        self._state_path.write_text(json.dumps(state))
        bootstrap = f"127.0.0.1:{port}"
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if process.poll() is not None:
                break
            try:
                _answers(bootstrap)
                logger.info("local Kafka broker up at %s (pid %d)", bootstrap, process.pid)
                return bootstrap
            except BrokerError:
                time.sleep(0.3)
        self.stop()
        tail = log_path.read_text(errors="replace").strip().splitlines()[-3:]
        raise BrokerError(f"local broker did not start on port {port}: {' | '.join(tail)}")

    def wait_saved(self, ends: Mapping[str, Mapping[int, int]], timeout_s: float = 120.0) -> float:
        """Wait until the broker's snapshot on disk holds every message below ``ends``.

        The broker acknowledges a message once it is in memory and saves a snapshot
        about once a second (see :mod:`core.kafka.saved`); until then a SIGKILL loses it.

        Args:
            ends: per topic, the end offset of each partition that must be saved.
            timeout_s: how long a save may take.

        Returns:
            The seconds waited.

        Raises:
            BrokerError: the broker stopped, or did not save them in time.
        """
        started = time.monotonic()
        snapshot = self.data_dir / SNAPSHOT_FILE
        seen: object = object()  # the first pass always reads the snapshot
        missing: list[str] = []
        while True:
            try:
                stat = snapshot.stat()
                changed = (stat.st_mtime_ns, stat.st_size, stat.st_ino)
            except FileNotFoundError:
                changed = None
            if changed != seen:
                seen, missing = changed, self._unsaved(ends)
                if not missing:
                    return time.monotonic() - started
            if not self.status().running:
                raise BrokerError(f"the embedded broker stopped before it saved {missing[0]} to "
                                  f"{snapshot}; run the command again")  # fmt: skip
            if time.monotonic() - started > timeout_s:
                raise BrokerError(f"the embedded broker did not save {missing[0]} to {snapshot} "
                                  f"within {timeout_s:.0f} s")  # fmt: skip
            time.sleep(0.05)

    def _unsaved(self, ends: Mapping[str, Mapping[int, int]]) -> list[str]:
        missing = []
        for topic, wanted in ends.items():
            try:
                saved = saved_end_offsets(self.data_dir, topic) or {}
            except SnapshotFormatError as exc:
                raise BrokerError(f"cannot read the embedded broker's snapshot: {exc}") from None
            missing += [f"{topic}[{p}] up to offset {end} (saved: {saved.get(p, 0)})"
                        for p, end in sorted(wanted.items()) if saved.get(p, 0) < end]  # fmt: skip
        return missing

    def stop(self, timeout_s: float = 15.0) -> bool:
        """Stop the broker (SIGINT, then SIGKILL); False if it was not running."""
        current = self.status()
        if not current.running or current.pid is None:
            return False
        os.kill(current.pid, signal.SIGINT)
        deadline = time.monotonic() + timeout_s
        while _alive(current.pid) and time.monotonic() < deadline:
            self._reap(current.pid)
            time.sleep(0.1)
        if _alive(current.pid):
            os.kill(current.pid, signal.SIGKILL)
        self._reap(current.pid)
        logger.info("local Kafka broker stopped (pid %d)", current.pid)
        return True

    @staticmethod
    def _reap(pid: int) -> None:
        # Our own child turns into a zombie until waited for; a stranger's is not ours to reap.
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            pass

    def __enter__(self) -> LocalBroker:
        self.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:  # fmt: skip
        self.stop()
