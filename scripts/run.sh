#!/usr/bin/env bash
# Set up (if needed) and run the main job on the embedded defaults.
# Extra arguments are passed to the job, e.g. scripts/run.sh --workers 20
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
exec .venv/bin/dkg run "$@"
