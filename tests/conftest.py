"""Settings every test shares: no test touches the working directory's embedded broker."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True, scope="session")
def _embedded_broker_in_a_temporary_folder(tmp_path_factory: pytest.TempPathFactory
                                           ) -> Iterator[None]:  # fmt: skip
    # A command run without --bootstrap-servers starts (or reuses) the broker of
    # kafka.embedded.run_dir; tests keep theirs apart from a developer's `dkg kafka up`.
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DKG_KAFKA__EMBEDDED__RUN_DIR", str(tmp_path_factory.mktemp("embedded-kafka")))
        yield
