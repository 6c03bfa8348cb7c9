"""Whether a server named ``HOST:PORT`` accepts TCP connections, asked before a client retries."""

from __future__ import annotations

import socket
from collections.abc import Iterable

__all__ = ["connect_problems"]


def connect_problems(servers: Iterable[str], timeout_s: float = 3.0) -> list[str] | None:
    """``None`` once one of ``servers`` accepts a connection, else why each did not.

    Clients such as librdkafka and Spark's standalone client retry an unreachable
    address for a minute or more; a user who mistyped it hears about it in seconds.

    Returns:
        ``None``, or one ``"HOST:PORT (reason)"`` per server (empty if none was named).
    """
    problems = []
    for server in filter(None, (s.strip() for s in servers)):
        host, _, port = server.rpartition(":")
        try:
            with socket.create_connection((host.strip("[]") or "localhost", int(port)), timeout_s):
                return None
        except (OSError, ValueError) as exc:
            problems.append(f"{server} ({exc.strerror or exc})" if isinstance(exc, OSError)
                            else f"{server} (expected HOST:PORT)")  # fmt: skip
    return problems
