"""What a Python user would run instead of the pipeline, timed on the same topic and broker.

- :mod:`bench.peers.quix_app`: a quix-streams application (its own virtualenv);
- :mod:`bench.peers.spark_job`: the plain Spark job, ``groupBy(window, key).count()`` into Delta;
- :mod:`bench.peers.oracle`: the generator's own counts, which every result must equal;
- :mod:`bench.peers.run`: runs both after the pipeline benchmark's drain (``--peers``).
"""

from __future__ import annotations

__all__: list[str] = []
