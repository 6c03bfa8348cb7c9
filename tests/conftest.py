"""Settings every test shares: no test touches the working directory's embedded broker.

Property-based tests (hypothesis) run under one of two settings profiles, chosen
by ``HYPOTHESIS_PROFILE``: ``quick`` (the default, and what CI runs) keeps each
property to a few dozen generated examples, derandomized so a CI run is
repeatable; ``deep`` tries a thousand examples per property with a fresh random
seed each run, to hunt for rare inputs on demand.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings

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
