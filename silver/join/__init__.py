"""The windowed stream-stream join with partition-aware sync (seed 004).

Pure Python: :mod:`~silver.join.engine` (the state machine),
:mod:`~silver.join.sharding`, :mod:`~silver.join.operator`, :mod:`~silver.join.local`.
Spark glue: :mod:`~silver.join.stream` and the writer in :mod:`~silver.join.sink`.
"""

from __future__ import annotations

from silver.join.engine import JoinEngine, JoinParams

__all__ = ["JoinEngine", "JoinParams"]
