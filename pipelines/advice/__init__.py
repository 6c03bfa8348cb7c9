"""``dkg advise``'s parts: the sample's tuples, the skew measures, the grid of groupings, the rule.

:mod:`pipelines.advise` puts them together. The main job uses the rate
estimator: :func:`topic_tuples_per_second` samples a topic read-only and
returns its tuples per second of event time, which turns ``run.load`` into the
queue model's speed for a topic the job did not generate.
"""

from __future__ import annotations

from pipelines.advice.sampled import topic_tuples_per_second, tuples_per_second

__all__ = ["topic_tuples_per_second", "tuples_per_second"]
