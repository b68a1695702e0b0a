#!/usr/bin/env bash
# Set up a virtualenv (if needed) and run the demo: a small swarm in a scratch repository.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/hive demo "$@"
