"""Console logging shared by the benchmark scripts."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

__all__ = ["configure_logging", "publish"]


def configure_logging() -> None:
    """INFO lines of the project; only warnings from chatty libraries."""
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    for noisy in ("kafka", "py4j", "numba"):
        logging.getLogger(noisy).setLevel(logging.WARNING)


def publish(result: dict[str, Any], output: Path) -> None:
    """Print ``result`` as JSON and save it to ``output`` (its folder is created)."""
    text = json.dumps(result, indent=2)
    print(text)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(text)
