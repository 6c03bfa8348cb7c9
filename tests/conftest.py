"""Settings every test shares: no test touches the working directory's embedded broker.

The fast profile (``-m "not slow"``) starts no JVM, broker or browser: a test
that uses the Spark session, a broker, the object-store server or the browser is
marked slow by its fixtures, and in that profile starting Spark or the embedded
broker fails the test that tries.

Property-based tests (hypothesis) run under one of two settings profiles, chosen
by ``HYPOTHESIS_PROFILE``: ``quick`` (the default, and what CI runs) keeps each
property to a few dozen generated examples, derandomized so a CI run is
repeatable; ``deep`` tries a thousand examples per property with a fresh random
seed each run, to hunt for rare inputs on demand.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings

# A pytest-xdist worker's __main__ has neither a spec nor a file, which pyspark's Connect
# import check takes for a doctest run and answers with sys.exit(0) (great_expectations
# imports pyspark.sql.connect). An interactive-looking worker makes it fall through to
# its usual answer here: ImportError, no grpc.
if os.environ.get("PYTEST_XDIST_WORKER"):
    sys.ps1 = getattr(sys, "ps1", ">>> ")

# Grouping kernels compile on first use and the machines are shared: time limits per
# example would flag the compiler and the neighbours, not the code under test.
_COMMON = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow]}
settings.register_profile("quick", max_examples=30, derandomize=True, database=None,
                          print_blob=True, **_COMMON)  # fmt: skip
settings.register_profile("deep", max_examples=1000, print_blob=True, **_COMMON)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "quick"))


@pytest.fixture(autouse=True, scope="session")
def _embedded_broker_in_a_temporary_folder(tmp_path_factory: pytest.TempPathFactory
                                           ) -> Iterator[None]:  # fmt: skip
    # A command run without --bootstrap-servers starts (or reuses) the broker of
    # kafka.embedded.run_dir; tests keep theirs apart from a developer's `dkg kafka up`.
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DKG_KAFKA__EMBEDDED__RUN_DIR", str(tmp_path_factory.mktemp("embedded-kafka")))
        yield


HEAVY_FIXTURES = frozenset({"spark", "kafka_broker", "join_bootstrap", "s3_endpoint", "browser"})
"""A test using any of these (directly or through another fixture) is slow."""


LONGEST_FIRST = (
    "tests/integration/test_crash_harness.py",
    "tests/integration/kafka/test_infrastructure_profile.py",
    "tests/integration/kafka/test_task_failures.py",
    "tests/integration/documented/test_shown_jobs.py",
    "tests/integration/documented/test_shown_embedded_broker.py",
    "tests/integration/documented/test_shown_s3.py",
    "tests/integration/kafka/test_embedded_broker_durability.py",
    "tests/integration/storage/test_s3_warehouse.py",
    "tests/integration/test_shared_job_cluster.py",
    "tests/integration/kafka/test_tls_kafka.py",
)
"""The modules that take a minute or more, longest first: scripts/test.sh's two workers
(pytest-xdist, one module at a time, in this order) start them before the many short
ones, so both workers end together."""


@pytest.hookimpl(tryfirst=True)  # before -m deselects by mark
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if HEAVY_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)
    rank = {path: n for n, path in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank)))  # stable


def _refuse(what: str) -> None:
    raise AssertionError(f"a test of the fast profile starts {what}: mark it slow")


@pytest.fixture(autouse=True, scope="session")
def _fast_profile_starts_nothing_heavy(request: pytest.FixtureRequest) -> Iterator[None]:
    if request.config.option.markexpr != "not slow":
        yield
        return
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("core.spark.session.build_spark", lambda *_, **__: _refuse("Spark"))
        patch.setattr("core.kafka.broker.LocalBroker.start",
                      lambda *_, **__: _refuse("the embedded broker"))  # fmt: skip
        yield
