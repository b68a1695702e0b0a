#!/usr/bin/env bash
# Set up a virtualenv (if needed) and run the demo: a small swarm in a scratch repository.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
.venv/bin/python -m pip install --quiet -e .
exec .venv/bin/hive demo "$@"
