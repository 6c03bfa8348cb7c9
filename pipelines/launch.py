"""``python -m pipelines.launch module:function ARGS...``: call a console script.

What a ``python_wheel_task`` does on Databricks, without installing a wheel:
import ``module``, call ``function(ARGS)`` and exit with its return value.
"""

from __future__ import annotations

import importlib
import sys

__all__ = ["main"]


def main(argv: list[str]) -> int:
    """Call the ``module:function`` in ``argv[0]`` with the rest of ``argv``."""
    module_name, _, function_name = argv[0].partition(":")
    function = getattr(importlib.import_module(module_name), function_name)
    # Console scripts read sys.argv when called without arguments; set it for both styles.
    sys.argv = [function_name, *argv[1:]]
    result = function(argv[1:])
    return result if isinstance(result, int) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
