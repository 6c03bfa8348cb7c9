"""Why a Kafka client failed, in one line: librdkafka's own reason, and records the pipeline cannot hold.

The librdkafka texts were captured from clients of the embedded broker (noida-db):
SCRAM against a broker that cannot complete it, and TLS against its plaintext
listener.
"""

from __future__ import annotations

import pytest
from confluent_kafka import KafkaError

from core.kafka.admin import BrokerError, librdkafka_problem
from core.kafka.records import MAX_TIMESTAMP_MS, check_timestamps

SCRAM = ("sasl_plaintext://127.0.0.1:33155/bootstrap: SASL authentication error: Server nonce in "
         "server-first-message: could not find attribute (r) (after 1ms in state AUTH_REQ)")  # fmt: skip
TLS = ("ssl://127.0.0.1:33155/bootstrap: SSL handshake failed: Disconnected: SSL connection "
       "closed by peer: connecting to a PLAINTEXT broker listener? (after 0ms in state SSL_HANDSHAKE)")  # fmt: skip
TLS_FIRST = ("ssl://127.0.0.1:33155/bootstrap: Disconnected: SSL connection closed by peer "
             "(after 0ms in state SSL_HANDSHAKE)")  # fmt: skip
# What a real broker answers a wrong password (librdkafka's text; noida-db takes any).
REFUSED = ("sasl_ssl://b-1.kafka:9096/1: SASL authentication error: Authentication failed during "
           "authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512 (after "
           "12ms in state AUTH_REQ, 1 identical error(s) suppressed)")  # fmt: skip
REFUSED_PORT = ("127.0.0.1:35599/bootstrap: Connect to ipv4#127.0.0.1:35599 failed: Connection "
                "refused (after 0ms in state CONNECT)")  # fmt: skip
SASL_HINT = ("check kafka.security_protocol, kafka.sasl_mechanism, kafka.sasl_username and "
             "kafka.sasl_password")  # fmt: skip


def _errors(*pairs: tuple[int, str]) -> list[KafkaError]:
    return [KafkaError(code, text) for code, text in pairs]


@pytest.mark.parametrize(("errors", "problem"), [
    (_errors((KafkaError._AUTHENTICATION, SCRAM), (KafkaError._ALL_BROKERS_DOWN, "0/2 brokers are down")),
     f"SASL authentication error: Server nonce in server-first-message: could not find attribute (r) ({SASL_HINT})"),
    (_errors((KafkaError._ALL_BROKERS_DOWN, "1/1 brokers are down"), (KafkaError._AUTHENTICATION, REFUSED)),
     "SASL authentication error: Authentication failed during authentication due to invalid "
     f"credentials with SASL mechanism SCRAM-SHA-512 ({SASL_HINT})"),
    # The handshake's first report lacks the reason its retries repeat.
    (_errors((KafkaError._TRANSPORT, TLS_FIRST), (KafkaError._ALL_BROKERS_DOWN, "0/2 brokers are down"),
             (KafkaError._TRANSPORT, TLS), (KafkaError._TRANSPORT, TLS)),
     "SSL handshake failed: Disconnected: SSL connection closed by peer: connecting to a PLAINTEXT "
     "broker listener? (check kafka.security_protocol and the kafka.ssl_* settings)"),
    (_errors((KafkaError._TRANSPORT, REFUSED_PORT)),
     "Connect to ipv4#127.0.0.1:35599 failed: Connection refused"),
    (_errors((KafkaError._ALL_BROKERS_DOWN, "1/1 brokers are down")), "1/1 brokers are down"),
    ([], None),
])  # fmt: skip
def test_the_error_that_says_why(errors, problem):
    assert librdkafka_problem(errors) == problem


def test_timestamps_pandas_holds_pass():
    check_timestamps("t", 0, [5, 6, 7], [-1, 1_767_225_600_000, MAX_TIMESTAMP_MS])
    check_timestamps("t", 0, [], [])


def test_a_timestamp_past_2262_names_its_record():
    microseconds = 1_767_225_600_000_000  # 2026 in µs, sent as ms
    with pytest.raises(BrokerError) as caught:
        check_timestamps("events", 3, [40, 41, 42], [1_767_225_600_000, microseconds, 0])
    assert str(caught.value).startswith(
        f"events[3] offset 41: its Kafka timestamp {microseconds} ms is outside the years "
        "1677-2262 the pipeline's timestamps hold (a producer that set microseconds as "
        "milliseconds?)"
    )
