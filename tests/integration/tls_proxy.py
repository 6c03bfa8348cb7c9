"""A TLS-terminating TCP proxy whose upstream connections live in another network namespace.

The embedded broker advertises the address it binds, so a proxy in front of it is
bypassed once a client reads the cluster's metadata, unless the proxy listens at
that very address. Here it does: the broker binds ``127.0.0.1:PORT`` in a network
namespace of its own, the proxy listens on ``127.0.0.1:PORT`` in the clients'
namespace and opens each upstream connection inside the broker's (a socket stays
in the namespace it was created in). Every client connection, the metadata's
included, is TLS; the broker sees plaintext.

Run as ``python -m tests.integration.tls_proxy LISTEN_PORT NETNS_FILE CERT KEY`` in the
clients' namespace; it prints ``ready`` once listening and appends a line to stdout
per completed TLS handshake.
"""

from __future__ import annotations

import ctypes
import os
import socket
import ssl
import sys
import threading

__all__ = ["main"]

_CLONE_NEWNET = 0x40000000
_libc = ctypes.CDLL(None, use_errno=True)
_lock = threading.Lock()


def _setns(fd: int) -> None:
    if _libc.setns(fd, _CLONE_NEWNET) != 0:
        raise OSError(ctypes.get_errno(), "setns failed")


def _upstream(netns_file: str, port: int) -> socket.socket:
    """A connection to ``127.0.0.1:port`` of the broker's namespace."""
    with _lock:  # setns acts on the calling thread: create the socket there, then come back
        own = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
        target = os.open(netns_file, os.O_RDONLY)
        try:
            _setns(target)
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        finally:
            _setns(own)
            os.close(target)
            os.close(own)
    sock.connect(("127.0.0.1", port))
    return sock


def _pump(source: socket.socket, sink: socket.socket) -> None:
    try:
        while data := source.recv(65536):
            sink.sendall(data)
    except OSError:
        pass
    finally:
        for sock in (source, sink):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def _serve(client: socket.socket, context: ssl.SSLContext, netns_file: str, port: int) -> None:
    try:
        secure = context.wrap_socket(client, server_side=True)
    except (ssl.SSLError, OSError) as exc:
        print(f"handshake refused: {exc}", flush=True)
        client.close()
        return
    print("tls handshake", flush=True)
    upstream = _upstream(netns_file, port)
    threading.Thread(target=_pump, args=(upstream, secure), daemon=True).start()
    _pump(secure, upstream)


def main(argv: list[str]) -> None:
    """Listen on ``127.0.0.1:PORT`` with TLS; forward to the same address in ``NETNS_FILE``'s namespace."""
    port, netns_file, cert, key = int(argv[0]), argv[1], argv[2], argv[3]
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server = socket.create_server(("127.0.0.1", port), reuse_port=False)
    print("ready", flush=True)
    while True:
        client, _ = server.accept()
        threading.Thread(target=_serve, args=(client, context, netns_file, port), daemon=True).start()


if __name__ == "__main__":
    main(sys.argv[1:])
