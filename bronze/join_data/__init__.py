"""Two-topic data for the stream-stream join: a generator with ground truth, and its producer."""

from __future__ import annotations

from bronze.join_data.generator import JoinData, JoinDataSpec, generate
from bronze.join_data.producer import produce_phase

__all__ = ["JoinData", "JoinDataSpec", "generate", "produce_phase"]
