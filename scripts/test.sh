#!/usr/bin/env bash
# Set up (if needed) and run the whole test suite. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/setup_chromium.sh
# The code's rules first: lint, and the layers' import contracts (pyproject.toml).
.venv/bin/ruff check --quiet .
.venv/bin/lint-imports --no-logo --no-cache
# Two workers, one module each at a time, the longest modules first (tests/conftest.py);
# --durations: the slowest, to keep the suite within its budget.
exec .venv/bin/python -m pytest -n 2 --dist loadfile --no-loadscope-reorder --durations=30 "$@"
