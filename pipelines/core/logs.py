"""The one place that sets up logging handlers (only the CLI calls it)."""

from __future__ import annotations

import logging

__all__ = ["configure_logging"]


def configure_logging(level: int = logging.INFO) -> None:
    """Log to stderr as ``LEVEL name: message``."""
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s", force=True)
    for noisy in ("numba", "py4j", "great_expectations"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
