"""Each layer names its tables once, and the names are the ones users query in SQL."""

from __future__ import annotations

from types import ModuleType

import pytest

import bronze.schemas
import gold.schemas
import silver.schemas
from core.warehouse import sql_name

# The public names (docs/pipeline.md, docs/join.md), spelled out here on purpose.
PUBLIC = {
    bronze.schemas: {"bronze.raw_events"},
    silver.schemas: {"silver.routed", "silver.quarantine", "silver.routing_snapshots",
                     "silver.worker_latency", "silver.worker_windows", "silver.worker_busy",
                     "silver.joined", "silver.join_rejects", "silver.join_state"},
    gold.schemas: {"gold.key_counts", "gold.worker_load", "gold.distribution_metrics",
                   "gold.hot_keys", "gold.worker_busy", "gold.runs", "gold.join_stats"},
}  # fmt: skip


def _declared(module: ModuleType) -> list[tuple[str, str]]:
    values = [getattr(module, name) for name in module.__all__]
    return [v for v in values
            if isinstance(v, tuple) and len(v) == 2 and all(isinstance(p, str) for p in v)]  # fmt: skip


@pytest.mark.parametrize("module", list(PUBLIC), ids=lambda m: m.__name__)
def test_a_layer_declares_its_public_tables_once(module: ModuleType) -> None:
    names = [sql_name(table) for table in _declared(module)]
    assert sorted(names) == sorted(PUBLIC[module])  # each once, none renamed
