"""A local Kafka-protocol broker (noida-db from PyPI), and topic helpers for any Kafka.

``LocalBroker`` starts the binary shipped inside the ``noida_db`` package on
loopback with its own data dir, records its pid in a state file so another
process can ask for its status or stop it (SIGINT, then SIGKILL), and waits
until it answers Kafka requests.

Topics are created with unlimited retention: noida-db otherwise truncates a
partition's log after a few megabytes, and a pipeline that reads from the
beginning would silently miss messages.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import socket
import subprocess
import time
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

__all__ = [
    "BrokerError",
    "BrokerStatus",
    "LocalBroker",
    "check_reachable",
    "end_offsets",
    "ensure_topic",
    "free_port",
    "topic_exists",
]

logger = logging.getLogger(__name__)

STATE_FILE = "broker.json"
TOPIC_CONFIGS = {"retention.ms": "-1", "retention.bytes": "-1"}


class BrokerError(RuntimeError):
    """The broker cannot be started, reached or asked."""


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


def check_reachable(bootstrap: str, timeout_s: float = 3.0) -> None:
    """Fail fast when no bootstrap server accepts TCP connections.

    kafka-python only gives up after its 30 s bootstrap timeout; a user who
    mistyped ``--bootstrap-servers`` should hear about it in seconds.
    """
    problems = []
    for server in filter(None, (s.strip() for s in bootstrap.split(","))):
        host, _, port = server.rpartition(":")
        try:
            with socket.create_connection((host.strip("[]") or "localhost", int(port)), timeout_s):
                return
        except (OSError, ValueError) as exc:
            problems.append(f"{server} ({exc.strerror or exc})" if isinstance(exc, OSError)
                            else f"{server} (expected HOST:PORT)")  # fmt: skip
    raise BrokerError(f"cannot reach Kafka at {bootstrap}: {', '.join(problems) or 'no servers'}")


def _admin(bootstrap: str, timeout_s: float = 5.0):  # kafka-python is untyped
    from kafka import KafkaAdminClient
    from kafka.errors import KafkaError

    check_reachable(bootstrap, timeout_s)
    try:
        return KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=int(timeout_s * 1000),
                                client_id="dkg-admin")  # fmt: skip
    except (KafkaError, OSError, ValueError) as exc:
        raise BrokerError(f"cannot reach Kafka at {bootstrap}: {exc}") from None


class LocalBroker:
    """A noida-db Kafka broker on 127.0.0.1, managed through ``run_dir``."""

    def __init__(self, run_dir: Path, port: int | None = None) -> None:
        self.run_dir = Path(run_dir)
        self.port = port

    @property
    def _state_path(self) -> Path:
        return self.run_dir / STATE_FILE

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
        data_dir = self.run_dir / "data"
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
                _admin(bootstrap, timeout_s=2.0).close()
                logger.info("local Kafka broker up at %s (pid %d)", bootstrap, process.pid)
                return bootstrap
            except BrokerError:
                time.sleep(0.3)
        self.stop()
        tail = log_path.read_text(errors="replace").strip().splitlines()[-3:]
        raise BrokerError(f"local broker did not start on port {port}: {' | '.join(tail)}")

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


def topic_exists(bootstrap: str, topic: str) -> bool:
    """Whether ``topic`` exists on the broker."""
    admin = _admin(bootstrap)
    try:
        return topic in admin.list_topics()
    finally:
        admin.close()


def ensure_topic(bootstrap: str, topic: str, partitions: int) -> None:
    """Create ``topic`` with ``partitions`` partitions and unlimited retention if missing."""
    from kafka.admin import NewTopic
    from kafka.errors import TopicAlreadyExistsError

    admin = _admin(bootstrap)
    try:
        if topic in admin.list_topics():
            return
        admin.create_topics([NewTopic(topic, partitions, 1, topic_configs=TOPIC_CONFIGS)])
    except TopicAlreadyExistsError:
        pass
    finally:
        admin.close()


def end_offsets(bootstrap: str, topic: str) -> dict[int, int]:
    """Next offset of every partition of ``topic`` (its current end)."""
    from kafka import KafkaConsumer, TopicPartition
    from kafka.errors import KafkaError

    check_reachable(bootstrap)
    try:
        consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False,
                                 request_timeout_ms=10_000, client_id="dkg-offsets")  # fmt: skip
    except (KafkaError, OSError, ValueError) as exc:
        raise BrokerError(f"cannot reach Kafka at {bootstrap}: {exc}") from None
    try:
        partitions = consumer.partitions_for_topic(topic)
        if not partitions:
            raise BrokerError(f"topic {topic!r} does not exist on {bootstrap}")
        offsets = consumer.end_offsets([TopicPartition(topic, p) for p in sorted(partitions)])
        return {tp.partition: int(offset) for tp, offset in offsets.items()}
    finally:
        consumer.close()
