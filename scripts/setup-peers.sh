#!/usr/bin/env bash
# Create .venv-peers for the pipeline benchmark's quix-streams peer (--peers).
# A virtualenv of its own: quixstreams caps confluent-kafka below the project's pin.
# Idempotent: does nothing when bench/peers/requirements.txt has not changed since the last install.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON="${PYTHON:-python3}"
[ -x .venv-peers/bin/python ] || "$PYTHON" -m venv .venv-peers

stamp=".venv-peers/.installed-$(sha256sum bench/peers/requirements.txt | cut -c1-16)"
if [ ! -f "$stamp" ]; then
  .venv-peers/bin/python -m pip install --quiet -r bench/peers/requirements.txt
  rm -f .venv-peers/.installed-*
  touch "$stamp"
fi
