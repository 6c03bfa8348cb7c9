#!/usr/bin/env bash
# Set up (if needed) and run the whole test suite. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/setup_chromium.sh
# The code's rules first: lint, and the layers' import contracts (pyproject.toml).
.venv/bin/ruff check --quiet .
.venv/bin/lint-imports --no-logo --no-cache
exec .venv/bin/python -m pytest --durations=30 "$@"  # the slowest, to keep the suite within its budget
