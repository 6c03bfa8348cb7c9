"""The job over TLS: every Kafka connection encrypted and verified against a CA of the test's own.

No Kafka broker that speaks TLS installs here, so the embedded broker gets a
TLS-terminating proxy (tests/integration/tls_proxy.py) in a setting where the
metadata cannot bypass it: the broker binds ``127.0.0.1:PORT`` in a network
namespace of its own, the proxy listens at the same address in the clients'
namespace, and ``dkg`` runs there with ``kafka.security_protocol: SSL`` and the
CA. Every connection the clients open (the advertised broker's included) is a TLS
handshake the proxy counts; a plaintext client is refused. Skipped where network
namespaces cannot be made (they need root and iproute2).
"""

from __future__ import annotations

import datetime
import ipaddress
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from bronze.datasets.base import DatasetSpec
from core.kafka.broker import _binary
from tests.exact_counts import dataset_counts, gold_counts

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

REPO = Path(__file__).resolve().parents[3]
PORT, MESSAGES = 39093, 3000


def _ip(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["ip", *args], capture_output=True, text=True, check=False)  # noqa: S603, S607


def _certificates(folder: Path) -> tuple[Path, Path, Path]:
    """A CA, and a server certificate for 127.0.0.1 signed by it: (ca, cert, key) PEM files."""
    now = datetime.datetime.now(datetime.UTC)
    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "dkg test CA")])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name)
          .public_key(ca_key.public_key()).serial_number(1).not_valid_before(now)
          .not_valid_after(now + datetime.timedelta(days=1))
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .sign(ca_key, hashes.SHA256()))  # fmt: skip
    cert = (x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")]))
            .issuer_name(ca_name).public_key(key.public_key()).serial_number(2)
            .not_valid_before(now).not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                           critical=False)
            .sign(ca_key, hashes.SHA256()))  # fmt: skip
    paths = folder / "ca.pem", folder / "server.pem", folder / "server.key"
    paths[0].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    paths[1].write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    paths[2].write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                           serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))  # fmt: skip
    return paths


def _wait_for(path: Path, text: str, process: subprocess.Popen, timeout_s: float = 30) -> None:
    deadline = time.monotonic() + timeout_s
    while text not in (path.read_text(errors="replace") if path.exists() else ""):
        if process.poll() is not None or time.monotonic() > deadline:
            pytest.fail(f"no {text!r} in {path}: {path.read_text(errors='replace')[-2000:]}")
        time.sleep(0.2)


@pytest.fixture
def namespaces() -> Iterator[tuple[str, str]]:
    broker, clients = f"dkgb{os.getpid()}", f"dkgc{os.getpid()}"
    made = _ip("netns", "add", broker)
    if made.returncode != 0:
        pytest.skip(f"network namespaces cannot be made here: {made.stderr.strip()}")
    _ip("netns", "add", clients)
    try:
        for name in (broker, clients):
            _ip("-n", name, "link", "set", "lo", "up")
        yield broker, clients
    finally:
        _ip("netns", "del", broker)
        _ip("netns", "del", clients)


def _dkg(clients: str, args: list[str], folder: Path, ca: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "SPARK_LOCAL_IP": "127.0.0.1",
           "DKG_KAFKA__SECURITY_PROTOCOL": "SSL", "DKG_KAFKA__SSL_CA_LOCATION": str(ca)}  # fmt: skip
    return subprocess.run(["ip", "netns", "exec", clients, sys.executable, "-m", "pipelines.cli",  # noqa: S603, S607
                           *args, "--bootstrap-servers", f"127.0.0.1:{PORT}"], cwd=folder,
                          env=env, capture_output=True, text=True, timeout=400, check=False)  # fmt: skip


def test_the_job_runs_over_tls_to_a_verified_broker(namespaces, tmp_path):
    broker_ns, clients = namespaces
    ca, cert, key = _certificates(tmp_path)
    broker_log, proxy_log = tmp_path / "broker.log", tmp_path / "proxy.log"
    with open(broker_log, "wb") as out:
        broker = subprocess.Popen(["ip", "netns", "exec", broker_ns, str(_binary()), "start",  # noqa: S603, S607
                                   "--only", "kafka", "--host", "127.0.0.1", "--kafka-port",
                                   str(PORT), "--data-dir", str(tmp_path / "data")],
                                  stdout=out, stderr=subprocess.STDOUT)  # fmt: skip
    with open(proxy_log, "wb") as out:
        proxy = subprocess.Popen(["ip", "netns", "exec", clients, sys.executable, "-m",  # noqa: S603, S607
                                  "tests.integration.tls_proxy", str(PORT),
                                  f"/var/run/netns/{broker_ns}", str(cert), str(key)],
                                 cwd=REPO, stdout=out, stderr=subprocess.STDOUT)  # fmt: skip
    try:
        _wait_for(broker_log, "kafka", broker)
        _wait_for(proxy_log, "ready", proxy)
        produced = _dkg(clients, ["produce", "--dataset", "ZIPF", "--messages", str(MESSAGES),
                                  "--topic", "secure", "--partitions", "2"], tmp_path, ca)  # fmt: skip
        assert produced.returncode == 0, produced.stderr[-3000:]
        done = _dkg(clients, ["run", "--format", "ZIPF", "--topic", "secure", "--grouping", "KEY",
                              "--skip-checks", "--warehouse", str(tmp_path / "wh")], tmp_path, ca)  # fmt: skip
        assert done.returncode == 0, done.stderr[-3000:]
        plain = subprocess.run(["ip", "netns", "exec", clients, sys.executable, "-m",  # noqa: S603, S607
                                "pipelines.cli", "produce", "--dataset", "ZIPF", "--messages", "10",
                                "--topic", "plain", "--bootstrap-servers", f"127.0.0.1:{PORT}"],
                               cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(REPO)},
                               capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
    finally:
        for process in (proxy, broker):
            process.terminate()
            process.wait(timeout=30)
    log = proxy_log.read_text(errors="replace")
    assert log.count("tls handshake") >= 2  # the producer's clients and the job's, at least
    assert plain.returncode != 0 and "handshake refused" in log  # plaintext is not let through
    (counts,) = gold_counts(tmp_path / "wh").values()
    assert counts == dataset_counts([DatasetSpec(name="ZIPF", messages=MESSAGES)])
