"""Console logging shared by the benchmark scripts."""

from __future__ import annotations

import logging

__all__ = ["configure_logging"]


def configure_logging() -> None:
    """INFO lines of the project; only warnings from chatty libraries."""
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    for noisy in ("kafka", "py4j", "numba"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
