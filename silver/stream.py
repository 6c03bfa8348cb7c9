"""Silver's Spark glue: parse bronze rows, route them per splitter with state.

Thin on purpose: the parsing and the routing are the pure functions in
``silver.parsing`` and ``silver.routing``, the same objects ``dkg simulate`` uses.
"""

from __future__ import annotations

import functools
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql.streaming.state import GroupStateTimeout

from silver.parsing import parse_batches
from silver.routing import route_group_with_state
from silver.schemas import PARSED_DDL, ROUTED_DDL, ROUTING_STATE_DDL

__all__ = ["parse_stream", "route_stream"]


def parse_stream(raw_events: DataFrame, source_type: str, splitters: int) -> DataFrame:
    """Bronze rows -> one row per tuple, or one quarantine row per bad message."""
    parse = functools.partial(parse_batches, source_type=source_type, splitters=splitters)
    return raw_events.mapInPandas(parse, PARSED_DDL)


def route_stream(parsed: DataFrame, grouping: str, workers: int, params: dict[str, Any]) -> DataFrame:
    """``groupBy(splitter).applyInPandasWithState``: each splitter owns a grouping instance."""
    route = functools.partial(route_group_with_state, grouping=grouping, workers=workers,
                              params=dict(params))  # fmt: skip
    return parsed.groupBy("splitter").applyInPandasWithState(
        route, ROUTED_DDL, ROUTING_STATE_DDL, "append", GroupStateTimeout.NoTimeout
    )
