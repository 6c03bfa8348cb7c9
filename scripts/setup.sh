#!/usr/bin/env bash
# Create .venv and install the project with its pinned dependencies.
# Idempotent: does nothing when pyproject.toml has not changed since the last install.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON="${PYTHON:-python3}"
if ! "$PYTHON" -c 'import sys; sys.exit(0 if sys.version_info[:2] >= (3, 11) else 1)' 2>/dev/null; then
  echo "setup: Python 3.11 or newer is needed (found: $("$PYTHON" --version 2>&1))" >&2
  exit 1
fi
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv

stamp=".venv/.installed-$(sha256sum pyproject.toml | cut -c1-16)"
archive=".venv/share/dkg-lakehouse/spark-classes.jsa"
if [ ! -f "$stamp" ]; then
  .venv/bin/python -m pip install --quiet --upgrade pip
  # setuptools reports every editable install with a notice about folders named like a
  # package in the working directory; here that is the layout, so the notice is noise.
  PYTHONWARNINGS="ignore:Editable installation" .venv/bin/python -m pip install --quiet -e ".[dev]"
  rm -f .venv/.installed-* "$archive"
  touch "$stamp"
fi
# The local Spark driver's classes, archived once so that every later start maps them
# ready (core/spark/class_archive.py); without it Spark still runs, only slower to start.
[ -f "$archive" ] || .venv/bin/python -m core.spark.class_archive \
  || echo "setup: no Spark class archive; Spark will start without it" >&2
